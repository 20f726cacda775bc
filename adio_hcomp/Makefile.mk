##
## hcomp: ROMIO driver for compressed multi-tier storage (libhcomp does the work).
##

if BUILD_AD_HCOMP

noinst_HEADERS += adio/ad_hcomp/ad_hcomp.h

romio_other_sources +=               \
    adio/ad_hcomp/ad_hcomp.c         \
    adio/ad_hcomp/ad_hcomp_error.c   \
    adio/ad_hcomp/ad_hcomp_open.c    \
    adio/ad_hcomp/ad_hcomp_opencoll.c \
    adio/ad_hcomp/ad_hcomp_close.c   \
    adio/ad_hcomp/ad_hcomp_read.c    \
    adio/ad_hcomp/ad_hcomp_write.c   \
    adio/ad_hcomp/ad_hcomp_fcntl.c   \
    adio/ad_hcomp/ad_hcomp_flush.c   \
    adio/ad_hcomp/ad_hcomp_resize.c  \
    adio/ad_hcomp/ad_hcomp_delete.c  \
    adio/ad_hcomp/ad_hcomp_hints.c   \
    adio/ad_hcomp/ad_hcomp_dtype.c

endif BUILD_AD_HCOMP
