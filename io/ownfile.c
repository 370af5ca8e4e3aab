#include "ownfile.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "error.h"

int strata_ownfile_check(const char *path, const char *what, const char *tail,
                         int others_may_not_write)
{
  struct stat sb;
  if (lstat(path, &sb) != 0)
    return strata_error(STRATA_EIO, "%s: cannot read the %s: %s", path, what, strerror(errno));
  if (S_ISLNK(sb.st_mode))
    return strata_error(STRATA_EIO, "%s: cannot read the %s: a symbolic link (strata does not "
                        "follow it)%s", path, what, tail);
  if (!S_ISREG(sb.st_mode))
    return strata_error(STRATA_EIO, "%s: cannot read the %s: not a regular file", path, what);
  if (sb.st_uid != geteuid())
    return strata_error(STRATA_EIO, "%s: cannot read the %s: owned by uid %d, not by you%s",
                        path, what, (int)sb.st_uid, tail);
  if (others_may_not_write && (sb.st_mode & (S_IWGRP | S_IWOTH)))
    return strata_error(STRATA_EIO, "%s: cannot read the %s: others may write it (mode %04o; "
                        "chmod go-w)", path, what, (unsigned)(sb.st_mode & 07777));
  return STRATA_OK;
}
