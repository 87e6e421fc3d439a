#!/usr/bin/env python3
"""Validates JSON documents against one JSON Schema, for the tests.

The schema's path is the only argument. Each line on stdin is one JSON
document; for each, one line goes to stdout: a JSON array of its errors
(where and what), empty when the document is valid. The validator is the
`jsonschema` package (python3-jsonschema), chosen by the schema's own
`$schema`: a validator written apart from the schemas' generator, so that
a mistake in one is not repeated in the other.
"""

import json
import sys

import jsonschema


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    validator = cls(schema)
    for line in sys.stdin:
        doc = json.loads(line)
        errors = [
            {"at": "/" + "/".join(str(p) for p in e.absolute_path), "error": e.message}
            for e in validator.iter_errors(doc)
        ]
        sys.stdout.write(json.dumps(errors[:10]) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
