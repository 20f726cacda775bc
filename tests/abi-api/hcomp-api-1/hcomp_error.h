/* hcomp error codes: every libhcomp call returns one of these, and fills an
 * hcomp_error with a message a user can act on (it names the file and the cause). */
#ifndef HCOMP_ERROR_H
#define HCOMP_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/* libhcomp exports only what its public headers declare with HCOMP_API. */
#if defined(__GNUC__)
#define HCOMP_API __attribute__((visibility("default")))
#else
#define HCOMP_API
#endif

enum hcomp_code {
    HCOMP_OK = 0,
    HCOMP_E_INVAL,        /* bad argument, hint or configuration value */
    HCOMP_E_NOENT,        /* file or tier directory does not exist */
    HCOMP_E_EXIST,        /* file exists and exclusive creation was asked */
    HCOMP_E_ACCESS,       /* permission denied, or an unsafe (foreign, symlinked) directory */
    HCOMP_E_NOSPC,        /* no tier has room left */
    HCOMP_E_NOTHCOMP,     /* the file is not an hcomp mapping file */
    HCOMP_E_VERSION,      /* the file uses a format version this library cannot read */
    HCOMP_E_CORRUPT,      /* checksum mismatch, truncated or undecodable data */
    HCOMP_E_IO,           /* an operating-system I/O error */
    HCOMP_E_NOMEM,        /* out of memory */
    HCOMP_E_UNSUPPORTED,  /* a valid request this library does not support */
    HCOMP_E_RDONLY,       /* write to a file opened read-only */
    HCOMP_E_NAME          /* a file name or path too long (or otherwise unusable as a name) */
};

#define HCOMP_ERROR_MSG_MAX 1024

typedef struct hcomp_error {
    int code;
    char msg[HCOMP_ERROR_MSG_MAX];
} hcomp_error;

/* Short stable name of a code, e.g. "HCOMP_E_NOSPC". */
HCOMP_API const char *hcomp_code_name(int code);

#ifdef __cplusplus
}
#endif
#endif
