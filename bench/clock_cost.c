/* Which clock should time each I/O? For every candidate: the cost of one
 * read (ns, over 20 million reads on one CPU), its resolution (the smallest
 * step seen between two reads, and what clock_getres says), and whether it
 * ever went backwards while the thread hopped between CPUs (every 1000
 * reads, each read compared with the one before). iocurve reads
 * CLOCK_MONOTONIC through the vDSO (std's Instant); see bench/README.md,
 * "Clock", for the figures and why it stays.
 *
 * Build and run:  gcc -O2 -o clock_cost bench/clock_cost.c && ./clock_cost
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

enum { READS = 20000000, HOPS = 2000, PER_HOP = 1000 };

typedef uint64_t (*reader)(void);

static uint64_t read_clock(clockid_t id) {
    struct timespec t;
    clock_gettime(id, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
static uint64_t monotonic(void) { return read_clock(CLOCK_MONOTONIC); }
static uint64_t monotonic_raw(void) { return read_clock(CLOCK_MONOTONIC_RAW); }
static uint64_t monotonic_coarse(void) { return read_clock(CLOCK_MONOTONIC_COARSE); }
#if defined(__x86_64__)
static uint64_t tsc(void) { return __rdtsc(); }
static uint64_t tsc_fenced(void) { _mm_lfence(); return __rdtsc(); }
static uint64_t tsc_p(void) { unsigned aux; return __rdtscp(&aux); }
#endif

struct candidate {
    const char *name;
    reader read;
    clockid_t getres; /* -1: none */
    int ticks;        /* counts TSC ticks, not ns */
};

static double ns_per_read(reader read) {
    volatile uint64_t sink = 0;
    uint64_t start = monotonic();
    for (int i = 0; i < READS; i++) sink += read();
    return (double)(monotonic() - start) / READS;
}

static uint64_t smallest_step(reader read) {
    uint64_t best = UINT64_MAX, before = read();
    for (int i = 0; i < READS / 10; i++) {
        uint64_t now = read();
        if (now > before && now - before < best) best = now - before;
        before = now;
    }
    return best;
}

static long backwards_across_cpus(reader read) {
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), backwards = 0;
    uint64_t before = read();
    for (int hop = 0; hop < HOPS; hop++) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(hop % cpus, &set);
        sched_setaffinity(0, sizeof set, &set);
        for (int i = 0; i < PER_HOP; i++) {
            uint64_t now = read();
            if (now < before) backwards++;
            before = now;
        }
    }
    return backwards;
}

static double tsc_ticks_per_ns(reader read) {
    uint64_t t0 = monotonic(), c0 = read();
    usleep(200000);
    return (double)(read() - c0) / (double)(monotonic() - t0);
}

int main(void) {
    struct candidate all[] = {
        {"CLOCK_MONOTONIC", monotonic, CLOCK_MONOTONIC, 0},
        {"CLOCK_MONOTONIC_RAW", monotonic_raw, CLOCK_MONOTONIC_RAW, 0},
        {"CLOCK_MONOTONIC_COARSE", monotonic_coarse, CLOCK_MONOTONIC_COARSE, 0},
#if defined(__x86_64__)
        {"rdtsc", tsc, -1, 1},
        {"lfence; rdtsc", tsc_fenced, -1, 1},
        {"rdtscp", tsc_p, -1, 1},
#endif
    };
    char source[64] = "unknown";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/current_clocksource", "r");
    if (f) {
        if (fscanf(f, "%63s", source) != 1) source[0] = 0;
        fclose(f);
    }
    printf("kernel clock source: %s, %ld CPUs\n\n", source, sysconf(_SC_NPROCESSORS_ONLN));
    printf("| clock | ns per read | smallest step seen | clock_getres | backwards across CPUs |\n");
    printf("|---|---:|---:|---:|---:|\n");
    for (size_t k = 0; k < sizeof all / sizeof all[0]; k++) {
        struct candidate *c = &all[k];
        double cost = ns_per_read(c->read);
        uint64_t step = smallest_step(c->read);
        char res[32] = "-", seen[32];
        if (c->getres >= 0) {
            struct timespec r;
            clock_getres(c->getres, &r);
            snprintf(res, sizeof res, "%ld ns", r.tv_sec * 1000000000L + r.tv_nsec);
        }
        if (c->ticks)
            snprintf(seen, sizeof seen, "%.1f ns", (double)step / tsc_ticks_per_ns(c->read));
        else
            snprintf(seen, sizeof seen, "%llu ns", (unsigned long long)step);
        printf("| %s | %.1f | %s | %s | %ld of %d |\n", c->name, cost, seen, res,
               backwards_across_cpus(c->read), HOPS * PER_HOP);
    }
    return 0;
}
