/*
 * pread_loop DEV BS SECONDS MODE
 *
 * Reference point for iocurve's overhead benchmark: the least work a
 * synchronous, per-I/O-timed, queue-depth-1 reader can do.  Opens DEV with
 * O_DIRECT, reads BS bytes at a time with pread() for SECONDS seconds, and
 * reads the monotonic clock before and after every read (as a benchmark that
 * records per-I/O latency must).  MODE is "rand" (BS-aligned offsets from a
 * xorshift64 generator) or "seq" (consecutive offsets, wrapping at the end).
 *
 * Prints: iops=N mbps=M   (M in MB/s, 1 MB = 10^6 bytes)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	if (argc != 5) {
		fprintf(stderr, "usage: %s DEV BS SECONDS rand|seq\n", argv[0]);
		return 2;
	}
	const char *dev = argv[1];
	uint64_t bs = strtoull(argv[2], NULL, 10);
	double secs = strtod(argv[3], NULL);
	int rand_mode = strcmp(argv[4], "rand") == 0;
	if (!rand_mode && strcmp(argv[4], "seq") != 0) {
		fprintf(stderr, "MODE must be rand or seq\n");
		return 2;
	}
	if (bs == 0 || bs % 4096 != 0 || secs <= 0) {
		fprintf(stderr, "BS must be a positive multiple of 4096, SECONDS > 0\n");
		return 2;
	}

	int fd = open(dev, O_RDONLY | O_DIRECT);
	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", dev, strerror(errno));
		return 1;
	}
	uint64_t size = 0;
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISBLK(st.st_mode)) {
		if (ioctl(fd, BLKGETSIZE64, &size) != 0)
			size = 0;
	} else if (fstat(fd, &st) == 0) {
		size = (uint64_t)st.st_size;
	}
	uint64_t nblocks = size / bs;
	if (nblocks == 0) {
		fprintf(stderr, "%s: smaller than one block\n", dev);
		return 1;
	}

	void *buf;
	if (posix_memalign(&buf, 4096, bs) != 0) {
		fprintf(stderr, "posix_memalign failed\n");
		return 1;
	}
	memset(buf, 0, bs);

	uint64_t x = 0x9E3779B97F4A7C15u ^ (uint64_t)now_ns(); /* xorshift64 state */
	uint64_t blk = 0, ios = 0, lat_sum = 0;
	uint64_t start = now_ns();
	uint64_t end = start + (uint64_t)(secs * 1e9);
	uint64_t t1 = start;

	while (t1 < end) {
		if (rand_mode) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			blk = x % nblocks;
		}
		uint64_t t0 = now_ns();
		ssize_t r = pread(fd, buf, bs, (off_t)(blk * bs));
		t1 = now_ns();
		if (r != (ssize_t)bs) {
			fprintf(stderr, "pread at %llu: %s\n",
				(unsigned long long)(blk * bs),
				r < 0 ? strerror(errno) : "short read");
			return 1;
		}
		lat_sum += t1 - t0; /* kept so the timing is real work */
		ios++;
		if (!rand_mode && ++blk == nblocks)
			blk = 0;
	}

	double elapsed = (double)(t1 - start) / 1e9;
	double iops = (double)ios / elapsed;
	printf("iops=%.0f mbps=%.1f\n", iops, iops * (double)bs / 1e6);
	fprintf(stderr, "ios=%llu elapsed=%.3fs mean_lat=%.0fns\n",
		(unsigned long long)ios, elapsed, (double)lat_sum / (double)ios);
	close(fd);
	free(buf);
	return 0;
}
