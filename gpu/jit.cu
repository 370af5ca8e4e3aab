#include "jit.h"

#include <cuda_runtime.h>
#include <nvrtc.h>

#include <cuda.h>
#include <dlfcn.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

extern "C" {
#include "cache.h"
#include "error.h"
}
#include "sample_kernel.cuh" /* (the point sets' names) */

#ifndef STRATA_CUDA_INCLUDE
#define STRATA_CUDA_INCLUDE "/usr/local/cuda/include"
#endif

#ifndef STRATA_NVRTC_LIB
#define STRATA_NVRTC_LIB "libnvrtc.so"
#endif

#define STR2(x) #x
#define STR(x) STR2(x)

namespace {

/* NVRTC has no system headers: the few that strata's headers and a user's
 * plain C name resolve to these (math functions are NVRTC built-ins). */
const char math_header[] =
    "#pragma once\n"
    "#define M_E 2.7182818284590452354\n#define M_LOG2E 1.4426950408889634074\n"
    "#define M_LOG10E 0.43429448190325182765\n#define M_LN2 0.69314718055994530942\n"
    "#define M_LN10 2.30258509299404568402\n#define M_PI 3.14159265358979323846\n"
    "#define M_PI_2 1.57079632679489661923\n#define M_PI_4 0.78539816339744830962\n"
    "#define M_1_PI 0.31830988618379067154\n#define M_2_PI 0.63661977236758134308\n"
    "#define M_2_SQRTPI 1.12837916709551257390\n#define M_SQRT2 1.41421356237309504880\n"
    "#define M_SQRT1_2 0.70710678118654752440\n"
    "#define HUGE_VAL __longlong_as_double(0x7ff0000000000000LL)\n"
    "#define INFINITY HUGE_VAL\n#define NAN __longlong_as_double(0x7ff8000000000000LL)\n";
const char stdint_header[] =
    "#pragma once\n"
    "typedef signed char int8_t; typedef unsigned char uint8_t;\n"
    "typedef short int16_t; typedef unsigned short uint16_t;\n"
    "typedef int int32_t; typedef unsigned int uint32_t;\n"
    "typedef long long int64_t; typedef unsigned long long uint64_t;\n"
    "#define INT64_C(c) c##LL\n#define UINT64_C(c) c##ULL\n#define UINT32_C(c) c##U\n";

/* One compiled (source, dimension, point set): its frozen and adapting
 * sampling kernels, [0] and [1], the peak search's evaluator, [2], with
 * the search's sampling kernels (kPhiloxTop) its channels' kernel, [3],
 * and with kPhilox in a dimension that packs the frozen kernel of packed
 * uniforms (kPhiloxPacked), [4] (NULL where there is none). */
enum { kEvalSlot = 2, kChannelSlot = 3, kPackedSlot = 4, kSlots = 5 };
struct entry {
  uint64_t src_hash;
  int dim, pts;
  cudaLibrary_t lib;
  cudaKernel_t kernel[kSlots];
};

double now_s()
{
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* NVRTC is opened when a user's integrand first needs it, not when strata
 * starts: its library is large, and opening it was a good part of every
 * GPU job's cold start, built-in integrands included (doc/design.md,
 * "NVRTC opened on first use"). */
struct nvrtc_api {
  decltype(&nvrtcCreateProgram) CreateProgram;
  decltype(&nvrtcAddNameExpression) AddNameExpression;
  decltype(&nvrtcCompileProgram) CompileProgram;
  decltype(&nvrtcGetProgramLogSize) GetProgramLogSize;
  decltype(&nvrtcGetProgramLog) GetProgramLog;
  decltype(&nvrtcGetLoweredName) GetLoweredName;
  decltype(&nvrtcGetCUBINSize) GetCUBINSize;
  decltype(&nvrtcGetCUBIN) GetCUBIN;
  decltype(&nvrtcDestroyProgram) DestroyProgram;
  decltype(&nvrtcGetErrorString) GetErrorString;
  decltype(&nvrtcVersion) Version;
};

nvrtc_api api;
std::string nv_error; /* why it could not be opened; empty: opened */
bool nv_at_toolkit;   /* opened from STRATA_NVRTC_LIB, the toolkit's own path */

void open_nvrtc()
{
  /* The toolkit strata was built with, then the library by its soname
   * (LD_LIBRARY_PATH, the system's), as the dynamic linker would find it. */
  const std::string soname = "libnvrtc.so." + std::to_string(CUDA_VERSION / 1000);
  const char *tries[] = {STRATA_NVRTC_LIB, soname.c_str()};
  void *lib = nullptr;
  for (const char *t : tries)
    if ((lib = dlopen(t, RTLD_NOW | RTLD_LOCAL))) {
      nv_at_toolkit = t == tries[0];
      break;
    }
  if (!lib) {
    const char *why = dlerror();
    nv_error = std::string("cannot open ") + STRATA_NVRTC_LIB + " or " + soname + " (" +
               (why ? why : "?") + ")";
    return;
  }
  bool ok = true;
  auto get = [&](auto &fn, const char *name) {
    fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
    ok = ok && fn;
  };
  get(api.CreateProgram, "nvrtcCreateProgram");
  get(api.AddNameExpression, "nvrtcAddNameExpression");
  get(api.CompileProgram, "nvrtcCompileProgram");
  get(api.GetProgramLogSize, "nvrtcGetProgramLogSize");
  get(api.GetProgramLog, "nvrtcGetProgramLog");
  get(api.GetLoweredName, "nvrtcGetLoweredName");
  get(api.GetCUBINSize, "nvrtcGetCUBINSize");
  get(api.GetCUBIN, "nvrtcGetCUBIN");
  get(api.DestroyProgram, "nvrtcDestroyProgram");
  get(api.GetErrorString, "nvrtcGetErrorString");
  get(api.Version, "nvrtcVersion");
  if (!ok) nv_error = "a function is missing from the NVRTC library opened";
}

int load_nvrtc()
{
  static std::once_flag once;
  std::call_once(once, open_nvrtc);
  if (nv_error.empty()) return STRATA_OK;
  return strata_error(STRATA_EBACKEND, "nvrtc: %s: users' integrands cannot run on the GPU",
                      nv_error.c_str());
}

/* What names the compiler in a cached kernel's key.  Opening NVRTC to ask
 * its version takes milliseconds that a run whose kernel is cached would
 * spend on nothing else, so where the toolkit's library is there, the
 * file itself names it (device, inode, size, modification time: a new
 * library is a new key); otherwise NVRTC is opened and gives its version.
 * by_file says which; a kernel keyed by the file but compiled by a
 * library opened elsewhere is not stored. */
int nvrtc_key(std::string &key, bool &by_file)
{
  struct stat f;
  if (stat(STRATA_NVRTC_LIB, &f) == 0 && S_ISREG(f.st_mode)) {
    char id[160];
    snprintf(id, sizeof id, "nvrtc file %llu %llu %lld %lld.%09ld\n", (unsigned long long)f.st_dev,
             (unsigned long long)f.st_ino, (long long)f.st_size, (long long)f.st_mtim.tv_sec,
             (long)f.st_mtim.tv_nsec);
    key = id;
    by_file = true;
    return STRATA_OK;
  }
  int rc = load_nvrtc();
  if (rc != STRATA_OK) return rc;
  int major = 0, minor = 0;
  api.Version(&major, &minor);
  key = "nvrtc " + std::to_string(major) + "." + std::to_string(minor) + "\n";
  by_file = false;
  return STRATA_OK;
}

int nvrtc_fail(nvrtcResult r, const char *what)
{
  return strata_error(STRATA_EBACKEND, "nvrtc: %s: %s", what, api.GetErrorString(r));
}

/* Compiles unit to a cubin; on success *image holds each expression's
 * lowered name and a newline, then the cubin: the form stored in the
 * cache. */
int compile(const strata_source *src, const char *unit, const std::vector<std::string> &exprs,
            const std::vector<const char *> &opts, std::vector<char> &image)
{
  int nemb = 0;
  const strata_embedded_file *emb = strata_embedded_files(&nemb);
  std::vector<const char *> names, texts;
  for (int i = 0; i < nemb; i++) {
    names.push_back(emb[i].name);
    texts.push_back(emb[i].text);
  }
  names.push_back("math.h");
  texts.push_back(math_header);
  names.push_back("stdint.h");
  texts.push_back(stdint_header);
  nvrtcProgram prog;
  nvrtcResult r = api.CreateProgram(&prog, unit, "strata_user.cu", (int)names.size(),
                                     texts.data(), names.data());
  if (r != NVRTC_SUCCESS) return nvrtc_fail(r, "creating the program");
  int rc = STRATA_OK;
  r = NVRTC_SUCCESS;
  for (size_t i = 0; i < exprs.size() && r == NVRTC_SUCCESS; i++)
    r = api.AddNameExpression(prog, exprs[i].c_str());
  if (r == NVRTC_SUCCESS) r = api.CompileProgram(prog, (int)opts.size(), opts.data());
  if (r == NVRTC_ERROR_COMPILATION) {
    size_t n = 0;
    api.GetProgramLogSize(prog, &n);
    std::vector<char> log(n + 1, '\0');
    api.GetProgramLog(prog, log.data());
    /* The whole log when asked for (STRATA_VERBOSE=1): the message keeps
     * to the first error, one line. */
    const char *v = getenv("STRATA_VERBOSE");
    if (v && *v == '1') fprintf(stderr, "%s", log.data());
    rc = strata_source_compile_failed(src, "nvrtc", log.data());
  } else if (r != NVRTC_SUCCESS) {
    rc = nvrtc_fail(r, "compiling");
  }
  std::string lowered_names;
  for (size_t i = 0; i < exprs.size() && rc == STRATA_OK; i++) {
    const char *lowered = NULL;
    if ((r = api.GetLoweredName(prog, exprs[i].c_str(), &lowered)) != NVRTC_SUCCESS)
      rc = nvrtc_fail(r, "kernel name");
    else
      lowered_names += std::string(lowered) + "\n";
  }
  size_t ncubin = 0;
  if (rc == STRATA_OK && (r = api.GetCUBINSize(prog, &ncubin)) != NVRTC_SUCCESS)
    rc = nvrtc_fail(r, "cubin size");
  if (rc == STRATA_OK) {
    image.assign(lowered_names.size() + ncubin, '\0');
    memcpy(image.data(), lowered_names.data(), lowered_names.size());
    r = api.GetCUBIN(prog, image.data() + lowered_names.size());
    if (r != NVRTC_SUCCESS) rc = nvrtc_fail(r, "cubin");
  }
  api.DestroyProgram(&prog);
  return rc;
}

int read_file(const char *path, std::vector<char> &out)
{
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  out.clear();
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, f)) > 0) out.insert(out.end(), buf, buf + n);
  int bad = ferror(f);
  fclose(f);
  return bad ? -1 : 0;
}

} // namespace

struct strata_jit {
  int device;
  int major, minor;
  std::vector<entry> entries;
  double build_s;
  int last_cached;
};

strata_jit *strata_jit_new(int device)
{
  strata_jit *j = new strata_jit();
  j->device = device;
  /* No device (a compile check on a machine without one): Hopper's. */
  if (cudaDeviceGetAttribute(&j->major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&j->minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    j->major = 9;
    j->minor = 0;
  }
  return j;
}

void strata_jit_free(strata_jit *j)
{
  if (!j) return;
  for (entry &e : j->entries) cudaLibraryUnload(e.lib);
  delete j;
}

double strata_jit_build_s(const strata_jit *j) { return j->build_s; }
int strata_jit_last_cached(const strata_jit *j) { return j->last_cached; }

/* The entry of (src, dim, pts), compiled and loaded where it is new; pts
 * -1: any point set's, or Philox's where there is none. */
static int find_entry(strata_jit *j, const strata_source *src, int dim, int pts,
                      const entry **out)
{
  const uint64_t h = strata_source_hash(src);
  for (const entry &e : j->entries)
    if (e.src_hash == h && e.dim == dim && (pts < 0 || e.pts == pts)) {
      *out = &e;
      return STRATA_OK;
    }
  if (pts < 0) pts = 0; /* (kPhilox) */
  const double t0 = now_s();
  char *user = strata_source_unit(src, STRATA_UNIT_CUDA);
  if (!user) return STRATA_ENOMEM;
  std::string unit = "#include \"sample_kernel.cuh\"\n#include \"eval_kernel.cuh\"\n"
                     "#include \"channel_kernel.cuh\"\n";
  unit += user;
  free(user);
  /* Every kernel in one program, so that a run's first frozen iteration
   * or peak search does not stop for a compile in the middle of the run:
   * a run pays once, at its first iteration. */
  std::vector<std::string> exprs;
  std::vector<int> slot;
  auto sampler = [&](bool adapt, int p, int at) {
    char expr[160];
    snprintf(expr, sizeof expr, "strata_k::sample_kernel<strata_user_fn, %d, %s, %d, %d>", dim,
             adapt ? "true" : "false", p, src->ncomp);
    exprs.push_back(expr);
    slot.push_back(at);
  };
  sampler(false, pts, 0);
  sampler(true, pts, 1);
  exprs.push_back("strata_k::eval_kernel<strata_user_fn, " + std::to_string(src->ncomp) + ">");
  slot.push_back(kEvalSlot);
  if (pts == strata_k::kPhiloxTop) {
    exprs.push_back("strata_k::channel_kernel<strata_user_fn, " + std::to_string(src->ncomp) + ">");
    slot.push_back(kChannelSlot);
  }
  if (pts == strata_k::kPhilox && STRATA_UNIFORM_PACKED_BITS(dim) < 32)
    sampler(false, strata_k::kPhiloxPacked, kPackedSlot);
  const int nk = (int)exprs.size();
  char arch[64];
  snprintf(arch, sizeof arch, "--gpu-architecture=sm_%d%d", j->major, j->minor);
  const char *inc = getenv("STRATA_CUDA_INCLUDE");
  std::string incopt = std::string("-I") + (inc && *inc ? inc : STRATA_CUDA_INCLUDE);
  std::vector<const char *> opts = {
      arch, "-std=c++17", "-default-device", incopt.c_str(),
      "-DSTRATA_MAX_DIM=" STR(STRATA_MAX_DIM), "-DSTRATA_MAX_PARAMS=" STR(STRATA_MAX_PARAMS),
      "-DSTRATA_MAX_COMP=" STR(STRATA_MAX_COMP)};

  /* The key: everything the cubin depends on, the headers' text included
   * (they are named, not pasted, in the unit). */
  int nemb = 0;
  std::string compiler;
  bool by_file = false;
  int rc = nvrtc_key(compiler, by_file);
  if (rc != STRATA_OK) return rc;
  std::string key = "strata " + std::string(strata_version()) + " gpu\n" + compiler;
  for (const std::string &x : exprs) key += x + "\n";
  for (const char *o : opts) key += std::string(o) + "\n";
  const strata_embedded_file *emb = strata_embedded_files(&nemb);
  for (int i = 0; i < nemb; i++) key += std::string("== ") + emb[i].name + "\n" + emb[i].text;
  key += "----\n" + unit;

  strata_cache_entry ce;
  rc = strata_cache_lookup("gpu", ".cubin", key.data(), key.size(), &ce);
  if (rc != STRATA_OK) return rc;
  std::vector<char> image;
  j->last_cached = ce.hit && read_file(ce.artifact, image) == 0;
  if (!j->last_cached) {
    if ((rc = load_nvrtc()) == STRATA_OK) rc = compile(src, unit.c_str(), exprs, opts, image);
    if (rc != STRATA_OK) return rc;
    FILE *f = fopen(ce.tmp, "wb");
    bool ok = f && fwrite(image.data(), 1, image.size(), f) == image.size();
    if (f && fclose(f) != 0) ok = false;
    /* A cache that cannot be written costs the next run a compile, no more;
     * a kernel keyed by the toolkit's file but compiled by another NVRTC
     * is used, not stored. */
    if (ok && (nv_at_toolkit || !by_file)) strata_cache_publish(&ce, key.data(), key.size());
    else remove(ce.tmp);
  }
  std::string name[kSlots];
  const char *at = image.data(), *end = image.data() + image.size();
  for (int k = 0; k < nk; k++) {
    const char *nl = (const char *)memchr(at, '\n', (size_t)(end - at));
    if (!nl)
      return strata_error(STRATA_EBACKEND, "%s: damaged cache entry (remove it)", ce.artifact);
    name[k].assign(at, nl);
    at = nl + 1;
  }
  entry e = {h, dim, pts, nullptr, {}};
  for (int k = 0; k < kSlots; k++) e.kernel[k] = nullptr;
  cudaError_t err = cudaSetDevice(j->device);
  if (err == cudaSuccess)
    err = cudaLibraryLoadData(&e.lib, at, nullptr, nullptr, 0, nullptr, nullptr, 0);
  /* Asking for a kernel's attributes loads it into the context now: CUDA
   * loads lazily, and the frozen kernel would otherwise load at the run's
   * first frozen iteration. */
  cudaFuncAttributes fa;
  for (int k = 0; k < nk && err == cudaSuccess; k++) {
    err = cudaLibraryGetKernel(&e.kernel[slot[k]], e.lib, name[k].c_str());
    if (err == cudaSuccess) err = cudaFuncGetAttributes(&fa, (const void *)e.kernel[slot[k]]);
  }
  if (err != cudaSuccess) {
    if (e.lib) cudaLibraryUnload(e.lib);
    return strata_error(STRATA_EBACKEND, "cuda device %d: loading the kernel of %s: %s",
                        j->device, src->origin, cudaGetErrorString(err));
  }
  j->entries.push_back(e);
  j->build_s += now_s() - t0;
  *out = &j->entries.back();
  return STRATA_OK;
}

int strata_jit_kernel(strata_jit *j, const strata_source *src, int dim, bool adapt, int pts,
                      const void **kernel)
{
  const entry *e = nullptr;
  /* (The packed frozen kernel is compiled with kPhilox's.) */
  const bool packed = pts == strata_k::kPhiloxPacked;
  int rc = find_entry(j, src, dim, packed ? strata_k::kPhilox : pts, &e);
  if (rc == STRATA_OK) *kernel = (const void *)e->kernel[packed && !adapt ? kPackedSlot : adapt];
  if (rc == STRATA_OK && !*kernel)
    return strata_error(STRATA_EBACKEND, "cuda device %d: no packed kernel for %s in %d "
                        "dimensions", j->device, src->origin, dim);
  return rc;
}

int strata_jit_eval_kernel(strata_jit *j, const strata_source *src, int dim, const void **kernel)
{
  const entry *e = nullptr;
  int rc = find_entry(j, src, dim, -1, &e);
  if (rc == STRATA_OK) *kernel = (const void *)e->kernel[kEvalSlot];
  return rc;
}

int strata_jit_channel_kernel(strata_jit *j, const strata_source *src, int dim,
                              const void **kernel)
{
  const entry *e = nullptr;
  int rc = find_entry(j, src, dim, strata_k::kPhiloxTop, &e);
  if (rc == STRATA_OK) *kernel = (const void *)e->kernel[kChannelSlot];
  return rc;
}
