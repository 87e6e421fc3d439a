/*
 * The fake hosts' self test, apart from iocurve: every rank prints its host
 * name and its CLOCK_MONOTONIC, and rank 0 estimates each rank's clock
 * offset by ping-pong (the reply with the shortest round trip, bounded by
 * half of it), so that the harness can be checked before iocurve is blamed.
 *
 * Build: mpicc -O2 -o mpi_clock mpi_clock.c
 * Output, one line per rank, in rank order (rank 0 prints them all):
 *   rank R host NAME mono_ns T offset_ns O bound_ns B
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

enum { ROUNDS = 50, TAG = 7 };

/* Rank 0's side of the exchange with `peer`: the peer's offset from rank
 * 0's clock and its bound. */
static void measure(int peer, int64_t *offset, int64_t *bound)
{
    int64_t best_rtt = INT64_MAX;
    for (int i = 0; i < ROUNDS; i++) {
        int64_t t0 = mono_ns(), remote;
        MPI_Send(&t0, 1, MPI_INT64_T, peer, TAG, MPI_COMM_WORLD);
        MPI_Recv(&remote, 1, MPI_INT64_T, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        int64_t t1 = mono_ns(), rtt = t1 - t0;
        if (rtt < best_rtt) {
            best_rtt = rtt;
            *offset = remote - (t0 + rtt / 2);
            *bound = rtt / 2 + 1;
        }
    }
}

static void answer(void)
{
    for (int i = 0; i < ROUNDS; i++) {
        int64_t t;
        MPI_Recv(&t, 1, MPI_INT64_T, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        t = mono_ns();
        MPI_Send(&t, 1, MPI_INT64_T, 0, TAG, MPI_COMM_WORLD);
    }
}

int main(int argc, char **argv)
{
    int rank, size;
    char host[256] = { 0 };
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    gethostname(host, sizeof host - 1);
    MPI_Barrier(MPI_COMM_WORLD);
    int64_t now = mono_ns();
    if (rank == 0) {
        printf("rank 0 host %s mono_ns %lld offset_ns 0 bound_ns 0\n", host, (long long)now);
        for (int peer = 1; peer < size; peer++) {
            char peer_host[256];
            int64_t peer_now, offset = 0, bound = 0;
            MPI_Recv(peer_host, sizeof peer_host, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Recv(&peer_now, 1, MPI_INT64_T, peer, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            measure(peer, &offset, &bound);
            printf("rank %d host %s mono_ns %lld offset_ns %lld bound_ns %lld\n", peer, peer_host,
                   (long long)peer_now, (long long)offset, (long long)bound);
        }
    } else {
        MPI_Send(host, sizeof host, MPI_CHAR, 0, TAG, MPI_COMM_WORLD);
        MPI_Send(&now, 1, MPI_INT64_T, 0, TAG, MPI_COMM_WORLD);
        answer();
    }
    MPI_Finalize();
    return 0;
}
