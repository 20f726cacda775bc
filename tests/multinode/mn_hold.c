/* Holds an hcomp file open (read-only, as any opener: the openers' shared lock) until it
 * is killed, after printing "open": for the multi-node suite's check that `hcomp compact`
 * on another node refuses a file this node has open.
 *
 * usage: mn_hold FILE */
#include <stdio.h>
#include <unistd.h>
#include "hcomp.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s FILE\n", argv[0]);
        return 2;
    }
    hcomp_file *f;
    hcomp_error err;
    if (hcomp_file_open(argv[1], HCOMP_O_RDONLY, 0, 1, NULL, &f, &err) != HCOMP_OK) {
        fprintf(stderr, "mn_hold: %s\n", err.msg);
        return 1;
    }
    printf("open\n");
    fflush(stdout);
    for (;;)
        pause();
}
