/* Which files strata reads its state from: on a shared cluster a link or a
 * file planted by another user is no state of this run. */
#ifndef STRATA_OWNFILE_H
#define STRATA_OWNFILE_H

/* STRATA_OK when path is a regular file (not followed if a link) owned by
 * the effective user, and with others_may_not_write also writable by
 * nobody else; otherwise a one-line error "PATH: cannot read the WHAT: ..."
 * (tail, e.g. "; the file is left as it is", ends the link and owner
 * refusals). */
int strata_ownfile_check(const char *path, const char *what, const char *tail,
                         int others_may_not_write);
#endif
