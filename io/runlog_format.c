#include "runlog_format.h"

#include <stddef.h>

/* Members are listed once; the file type packs them in order with
 * little-endian types, the memory type follows the C struct. */
typedef struct {
  const char *name;
  size_t offset;
  hid_t native, le;
} member;

static hid_t build(const member *m, int n, size_t size, int file)
{
  size_t packed = 0;
  for (int i = 0; i < n; i++) packed += H5Tget_size(file ? m[i].le : m[i].native);
  hid_t t = H5Tcreate(H5T_COMPOUND, file ? packed : size);
  size_t off = 0;
  for (int i = 0; i < n; i++) {
    hid_t mt = file ? m[i].le : m[i].native;
    H5Tinsert(t, m[i].name, file ? off : m[i].offset, mt);
    off += H5Tget_size(mt);
  }
  return t;
}

hid_t strata_log_row_type(int file)
{
#define D(f) {#f, offsetof(strata_log_row, f), H5T_NATIVE_DOUBLE, H5T_IEEE_F64LE}
#define I8(f) {#f, offsetof(strata_log_row, f), H5T_NATIVE_INT8, H5T_STD_I8LE}
  const member m[] = {
      {"itn", offsetof(strata_log_row, itn), H5T_NATIVE_INT32, H5T_STD_I32LE},
      D(integral), D(sigma), D(average), D(average_sigma), D(chi2_dof), D(Q),
      {"neval", offsetof(strata_log_row, neval), H5T_NATIVE_INT64, H5T_STD_I64LE},
      D(wall_s), D(elapsed_s), I8(kept), I8(restarted), I8(adapting)};
#undef D
#undef I8
  return build(m, (int)(sizeof m / sizeof *m), sizeof(strata_log_row), file);
}

hid_t strata_log_session_type(int file)
{
#define I32(f) {#f, offsetof(strata_log_session, f), H5T_NATIVE_INT32, H5T_STD_I32LE}
  const member m[] = {I32(first_itn), I32(ranks), I32(gpus), I32(threads)};
#undef I32
  return build(m, (int)(sizeof m / sizeof *m), sizeof(strata_log_session), file);
}
