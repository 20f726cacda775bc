/*
 * SetInfo: ROMIO's generic hints, then the hcomp_* hints. Every hcomp_* key in the
 * user's info is validated by libhcomp (a typo or a bad value is an error, not
 * silently ignored), and all hcomp_* hints are published with their current values
 * so MPI_File_get_info shows them. Later calls (MPI_File_set_info, set_view) win
 * over earlier ones, which win over ROMIO_HINTS.
 * The reserved MPI hint file_perm (octal permissions for a new file) is honoured:
 * it is checked here and kept in fd->info for Open; so is access_style (random: small
 * blocks under "auto"), which libhcomp parses with its own hints.
 */

#include "ad_hcomp.h"
#include <string.h>

static int hint_error(const char *myname, ADIO_File fd, const hcomp_error * cause)
{
    hcomp_error err;
    err.code = cause->code;
    snprintf(err.msg, sizeof(err.msg), "%.400s: %.600s", fd->filename ? fd->filename : "(no name)",
             cause->msg);
    if (fd->fs_ptr == NULL)     /* not open yet: make Open fail with it */
        fd->fs_ptr = ADIOI_Calloc(1, sizeof(ADIOI_HCOMP_State));
    ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
    if (st->file == NULL) {
        st->has_hint_error = 1;
        st->hint_error = err;
    }
    return ADIOI_HCOMP_Error(myname, &err);
}

void ADIOI_HCOMP_SetInfo(ADIO_File fd, MPI_Info users_info, int *error_code)
{
    static char myname[] = "ADIOI_HCOMP_SETINFO";
    char value[MPI_MAX_INFO_VAL + 1];
    char key[MPI_MAX_INFO_KEY + 1];
    hcomp_error err;
    int flag;

    ADIOI_GEN_SetInfo(fd, users_info, error_code);
    if (*error_code != MPI_SUCCESS)
        return;

    hcomp_options *opts = hcomp_options_new();
    if (opts == NULL) {
        err.code = HCOMP_E_NOMEM;
        snprintf(err.msg, sizeof(err.msg), "out of memory");
        *error_code = hint_error(myname, fd, &err);
        return;
    }
    /* start from what is in force */
    for (size_t i = 0; i < hcomp_options_count(); i++) {
        ADIOI_Info_get(fd->info, hcomp_options_key(i), MPI_MAX_INFO_VAL, value, &flag);
        if (flag)
            (void) hcomp_options_set(opts, hcomp_options_key(i), value, &err);
    }
    if (users_info != MPI_INFO_NULL) {
        ADIOI_Info_get(users_info, "file_perm", MPI_MAX_INFO_VAL, value, &flag);
        if (flag) {
            char *end;
            long perm = strtol(value, &end, 8);
            if (end == value || *end != '\0' || perm < 0 || perm > 07777) {
                hcomp_options_free(opts);
                err.code = HCOMP_E_INVAL;
                snprintf(err.msg, sizeof(err.msg), "hint file_perm=\"%.200s\": must be octal "
                         "permissions such as 0640", value);
                *error_code = hint_error(myname, fd, &err);
                return;
            }
            ADIOI_Info_set(fd->info, "file_perm", value);
        }
    }
    if (users_info != MPI_INFO_NULL) {
        /* an hcomp_ key we do not know is an error (a typo must not pass silently) */
        int nkeys = 0;
        MPI_Info_get_nkeys(users_info, &nkeys);
        for (int k = 0; k < nkeys; k++) {
            MPI_Info_get_nthkey(users_info, k, key);
            /* hcomp_file_kind is reported, not set: ignored (an info from
             * MPI_File_get_info given to another open must work) */
            if (hcomp_options_is_hint(key) && strcmp(key, ADIOI_HCOMP_KIND_KEY) != 0 &&
                hcomp_options_get(opts, key, value, sizeof(value)) != HCOMP_OK) {
                (void) hcomp_options_set(opts, key, "", &err);  /* fills the message */
                hcomp_options_free(opts);
                *error_code = hint_error(myname, fd, &err);
                return;
            }
        }
        /* known keys in the library's order (a priority before explicit weights) */
        for (size_t i = 0; i < hcomp_options_count(); i++) {
            ADIOI_Info_get(users_info, hcomp_options_key(i), MPI_MAX_INFO_VAL, value, &flag);
            if (flag && hcomp_options_set(opts, hcomp_options_key(i), value, &err) != HCOMP_OK) {
                hcomp_options_free(opts);
                *error_code = hint_error(myname, fd, &err);
                return;
            }
        }
    }
    ADIOI_HCOMP_State *st = (ADIOI_HCOMP_State *) fd->fs_ptr;
    if (st != NULL && st->file != NULL && hcomp_file_set_options(st->file, opts, &err) != HCOMP_OK) {
        hcomp_options_free(opts);
        *error_code = hint_error(myname, fd, &err);
        return;
    }
    for (size_t i = 0; i < hcomp_options_count(); i++) {
        /* access_style is shown only once given (MPI's reserved key, no default) */
        if (hcomp_options_get(opts, hcomp_options_key(i), value, sizeof(value)) == HCOMP_OK &&
            (value[0] != '\0' || hcomp_options_is_hint(hcomp_options_key(i))))
            ADIOI_Info_set(fd->info, hcomp_options_key(i), value);
    }
    hcomp_options_free(opts);
    *error_code = MPI_SUCCESS;
}
