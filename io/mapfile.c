#include "mapfile.h"

#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "error.h"
#include "h5util.h"
#include "ownfile.h"
#include "runlog_format.h"

void strata_mapfile_free(strata_mapfile *m)
{
  if (!m) return;
  free(m->definition);
  free(m->edges);
  free(m->nh);
  free(m);
}

/* The log's last map snapshot: /map is [k][naxes][ninc + 1]. */
static int read_log(hid_t f, const char *path, strata_mapfile *m)
{
  if (strata_h5_get_str(f, "definition", &m->definition) != 0)
    return strata_error(STRATA_EIO, "%s: damaged log: no definition: %s", path,
                        strata_h5_detail());
  hsize_t dims[3] = {0, 0, 0};
  hid_t d = strata_h5_open_data(f, "map", H5T_FLOAT, 3, dims, NULL);
  hid_t s = d >= 0 ? H5Dget_space(d) : -1;
  int ok = s >= 0;
  int rc = STRATA_OK;
  if (!ok) rc = strata_error(STRATA_EIO, "%s: damaged log: no valid /map: %s", path,
                            strata_h5_detail());
  else if (dims[0] == 0)
    rc = strata_error(STRATA_EINVAL, "%s: the log holds no map yet (a snapshot is written "
                      "every run.log_map iterations and when a session ends)", path);
  else if (dims[1] < 1 || dims[1] > 32 || dims[2] < 2 || dims[2] > 1000001)
    rc = strata_error(STRATA_EIO, "%s: damaged log: /map of impossible shape", path);
  if (rc == STRATA_OK) {
    m->naxes = (int)dims[1];
    m->ninc = (int)dims[2] - 1;
    size_t n = (size_t)(dims[1] * dims[2]);
    m->edges = malloc(sizeof(double) * n);
    hsize_t start[3] = {dims[0] - 1, 0, 0}, count[3] = {1, dims[1], dims[2]};
    hid_t mem = H5Screate_simple(3, count, NULL);
    if (!m->edges) rc = strata_error(STRATA_ENOMEM, "%s: out of memory", path);
    else if (mem < 0 ||
             H5Sselect_hyperslab(s, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
             H5Dread(d, H5T_NATIVE_DOUBLE, mem, s, H5P_DEFAULT, m->edges) < 0)
      rc = strata_error(STRATA_EIO, "%s: damaged log: cannot read /map", path);
    if (mem >= 0) H5Sclose(mem);
  }
  /* The snapshot's iteration, where the log has it for this snapshot. */
  hsize_t ni[1];
  hid_t di = rc == STRATA_OK ? strata_h5_open_data(f, "map_itn", H5T_INTEGER, 1, ni, NULL) : -1;
  if (di >= 0 && ni[0] == dims[0]) {
    hid_t si = H5Dget_space(di);
    hsize_t one = 1, at = dims[0] - 1;
    hid_t mem = H5Screate_simple(1, &one, NULL);
    int32_t itn = 0;
    if (si >= 0 && mem >= 0 && H5Sselect_hyperslab(si, H5S_SELECT_SET, &at, NULL, &one, NULL) >= 0 &&
        H5Dread(di, H5T_NATIVE_INT32, mem, si, H5P_DEFAULT, &itn) >= 0)
      m->itn = itn;
    if (mem >= 0) H5Sclose(mem);
    if (si >= 0) H5Sclose(si);
  }
  if (di >= 0) H5Oclose(di);
  if (s >= 0) H5Sclose(s);
  if (d >= 0) H5Oclose(d);
  return rc;
}

/* A checkpoint is read whole, checksums and all, by its own reader. */
static int read_checkpoint(const char *path, strata_mapfile *m)
{
  strata_checkpoint *c;
  int rc = strata_checkpoint_read(path, &c);
  if (rc != STRATA_OK) return rc;
  m->definition = c->definition;
  m->edges = c->edges;
  m->nh = c->nh;
  c->definition = NULL;
  c->edges = NULL;
  c->nh = NULL;
  m->itn = c->state.itn;
  m->naxes = c->state.naxes;
  m->ninc = c->state.ninc;
  m->nhcube = c->state.nhcube;
  strata_checkpoint_free(c);
  return STRATA_OK;
}

/* Another user's file, or one others may change, would let them choose
 * the map this run starts from (ownfile.h). */
static hid_t open_map(const char *path, int *rc)
{
  int failed;
  hid_t f = strata_ownfile_h5open(path, H5F_ACC_RDONLY, H5P_DEFAULT, "map", "",
                                  STRATA_TRUST_NOT_WRITABLE, &failed);
  if (f >= 0) return f;
  *rc = failed == STRATA_OWNFILE_NOT_HDF5
            ? strata_error(STRATA_EINVAL, "%s: cannot read the map: not an HDF5 file", path)
        : failed == STRATA_OWNFILE_H5_FAILED
            ? strata_error(STRATA_EIO, "%s: cannot read the map: %s", path, strata_h5_detail())
            : STRATA_EIO;
  return -1;
}

int strata_mapfile_read(const char *path, strata_mapfile **out)
{
  *out = NULL;
  strata_h5_begin();
  int rc = STRATA_OK;
  hid_t f = open_map(path, &rc);
  if (f < 0) return rc;
  char *format = NULL;
  htri_t has = H5Aexists(f, "format");
  if (has > 0 && strata_h5_get_str(f, "format", &format) != 0) has = -1;
  const int is_log = has > 0 && !strcmp(format, STRATA_LOG_FORMAT);
  /* A log is read through the file checked and opened above; a checkpoint
   * by the checkpoint's own reader, which opens it itself. */
  if (!is_log) H5Fclose(f);
  strata_mapfile *m = calloc(1, sizeof *m);
  if (!m) rc = strata_error(STRATA_ENOMEM, "%s: out of memory", path);
  else if (has > 0 && !strcmp(format, "strata checkpoint")) {
    m->kind = "checkpoint";
    rc = read_checkpoint(path, m);
  } else if (is_log) {
    m->kind = "log";
    rc = read_log(f, path, m);
  } else {
    rc = strata_error(STRATA_EINVAL, "%s: no map: neither a strata checkpoint nor a strata "
                      "log", path);
  }
  if (is_log) H5Fclose(f);
  free(format);
  H5Eclear2(H5E_DEFAULT);
  if (rc != STRATA_OK) {
    strata_mapfile_free(m);
    return rc;
  }
  *out = m;
  return STRATA_OK;
}

/* The value of "key = value" in a definition, as a pointer and length. */
static const char *value_of(const char *def, const char *key, int *len)
{
  size_t kl = strlen(key);
  for (const char *p = def; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
    if (!strncmp(p, key, kl) && !strncmp(p + kl, " = ", 3)) {
      const char *v = p + kl + 3, *e = strchr(v, '\n');
      *len = e ? (int)(e - v) : (int)strlen(v);
      return v;
    }
  }
  *len = 0;
  return "";
}

int strata_mapfile_fits(const strata_mapfile *m, const char *definition)
{
  static const char *keys[] = {"integral.dim", "integral.lower", "integral.upper"};
  for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
    int lt, lh;
    const char *there = value_of(m->definition, keys[k], &lt),
               *here = value_of(definition, keys[k], &lh);
    if (lt != lh || strncmp(there, here, (size_t)lt))
      return strata_error(STRATA_EINVAL, "%s = %.*s there, %.*s here", keys[k], lt, there, lh,
                          here);
  }
  return STRATA_OK;
}
