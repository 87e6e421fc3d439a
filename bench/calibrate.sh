#!/usr/bin/env bash
# Calibration of iocurve's analyses over a seeded population of simulated
# cards: builds the release binary and prints a table per analysis
# (answered, right, wrong, declined). CARDS and SEED may be set.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin iocurve --example calibrate
exec target/release/examples/calibrate --cards "${CARDS:-2000}" --seed "${SEED:-1}" "$@"
