// The `flashcute` command: run and time attention on random inputs from the command line.
//
//   flashcute info                 version, build configuration, GPU
//   flashcute run [options]        forward on random data (defaults: batch 4, seqlen 4096, 16 heads,
//                                  d 128, bf16): median time of --iters launches (CUDA events),
//                                  TFLOP/s (BENCHMARKING.md), and the error of --check-heads
//                                  (batch, head) pairs against the fp64 reference, beside the error
//                                  of an unfused implementation in the same dtype
//   flashcute bench [options]      the BENCHMARKING.md grid for flashcute alone (no Python needed):
//                                  fwd, bwd, fwd+bwd of each compiled path, CUDA-event medians with L2
//                                  flushed before each launch; a table on stdout, --csv / --json files
//                                  (the JSON follows bench/bench.py's schema, so `bench.py --merge`
//                                  reads it)
// Exit codes: 0 ok, 1 no usable GPU (or a CUDA failure), 2 the library refused the problem (bench:
// failed on a case for another reason than "not supported"), 3 the check against the reference
// failed, 64 bad command line.

#include <cuda_runtime.h>

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "common/mask.h"
#include "flashcute/flashcute.h"
#include "reference/numeric.h"
#include "reference/reference.h"

namespace {

using flashcute::Backend;
using flashcute::DType;

struct RunOptions {
  int64_t batch = 4, seqlen_q = 4096, seqlen_k = 4096, heads = 16, heads_kv = 0, d = 128, dv = 0;
  DType dtype = DType::kBFloat16;
  int iters = 20;
  int check_heads = 2;
  uint64_t seed = 1;
  bool fwd_workspace = true;  // the forward's optional workspace (SM90: the dynamic tile scheduler)
  bool fwd_workspace_zeroed = false;  // zeroed once, passed as Workspace::zeroed (no reset per launch)
  flashcute::AttentionOptions attn;
};

// The grid of docs/BENCHMARKING.md: batch = tokens / seqlen, heads = hidden / d.
struct BenchOptions {
  std::vector<DType> dtypes{DType::kBFloat16, DType::kFloat16};
  std::vector<int64_t> head_dims{64, 128, 256};
  std::vector<int64_t> seqlens{512, 1024, 2048, 4096, 8192, 16384};
  std::vector<bool> causals{false, true};
  std::vector<std::string> passes{"fwd", "bwd", "fwd+bwd"};
  std::vector<Backend> paths;  // empty: SM80, and SM90 on a cc 9.x GPU
  int64_t tokens = 16384, hidden = 2048;
  int warmup = 3, iters = 10;
  bool flush = true;
  bool fwd_workspace = true;  // the forward's optional workspace (SM90: the dynamic tile scheduler)
  bool fwd_workspace_zeroed = false;  // its own buffer, zeroed once, passed as Workspace::zeroed
  bool deterministic = false;  // the backward's deterministic mode (bwd and fwd+bwd passes)
  uint64_t seed = 1;
  std::string csv, json;
};

void usage(FILE* f) {
  std::fprintf(f,
               "usage: flashcute info\n"
               "       flashcute run [--batch N] [--seqlen N | --seqlen-q N --seqlen-k N] [--heads N]\n"
               "                     [--heads-kv N] [--d N] [--dv N] [--dtype bf16|fp16] [--causal]\n"
               "                     [--window-left N] [--window-right N] [--softcap C] [--scale S]\n"
               "                     [--backend auto|sm80|sm90] [--fwd-workspace yes|no|zeroed]\n"
               "                     [--iters N] [--check-heads N] [--seed N]\n"
               "       flashcute bench [--dtype bf16,fp16] [--d 64,128,256] [--seqlen 512,...,16384]\n"
               "                     [--causal both|true|false] [--pass fwd,bwd,fwd+bwd] [--backend sm80,sm90]\n"
               "                     [--tokens N] [--hidden N] [--warmup N] [--iters N] [--no-flush] [--seed N]\n"
               "                     [--fwd-workspace yes|no|zeroed] [--deterministic yes|no] [--csv PATH]\n"
               "                     [--json PATH]\n");
}

const char* dtype_name(DType dt) { return dt == DType::kBFloat16 ? "bf16" : "fp16"; }

bool parse_dtype(const std::string& value, DType* dt) {
  if (value == "bf16" || value == "bfloat16") *dt = DType::kBFloat16;
  else if (value == "fp16" || value == "float16") *dt = DType::kFloat16;
  else {
    std::fprintf(stderr, "flashcute: --dtype %s is not bf16 or fp16\n", value.c_str());
    return false;
  }
  return true;
}

bool parse_yes_no(const std::string& flag, const std::string& value, bool* b) {
  if (value != "yes" && value != "no") {
    std::fprintf(stderr, "flashcute: %s %s is not yes or no\n", flag.c_str(), value.c_str());
    return false;
  }
  *b = value == "yes";
  return true;
}

// --fwd-workspace: yes (a workspace, reset by the launcher before each launch), no (none), zeroed (a
// workspace zeroed once and passed as Workspace::zeroed: the kernel keeps it zero, no reset).
bool parse_fwd_workspace(const std::string& value, bool* given, bool* zeroed) {
  if (value != "yes" && value != "no" && value != "zeroed") {
    std::fprintf(stderr, "flashcute: --fwd-workspace %s is not yes, no or zeroed\n", value.c_str());
    return false;
  }
  *given = value != "no";
  *zeroed = value == "zeroed";
  return true;
}

bool parse_backend(const std::string& value, Backend* b) {
  if (value == "auto") *b = Backend::kAuto;
  else if (value == "sm80") *b = Backend::kSm80;
  else if (value == "sm90") *b = Backend::kSm90;
  else {
    std::fprintf(stderr, "flashcute: --backend %s is not auto, sm80 or sm90\n", value.c_str());
    return false;
  }
  return true;
}

bool parse_number(const std::string& flag, const std::string& value, double* num) {
  char* end = nullptr;
  *num = std::strtod(value.c_str(), &end);
  if (value.empty() || !end || *end != '\0') {
    std::fprintf(stderr, "flashcute: %s=%s is not a number\n", flag.c_str(), value.c_str());
    return false;
  }
  return true;
}

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    if (comma > start) items.push_back(text.substr(start, comma - start));
    start = comma + 1;
  }
  return items;
}

// Walks the options of `flashcute CMD ...`: `switch_flag` takes no value and sets *switch_seen; every
// other option takes the next argument and goes to handle(flag, value). False on --help, on a missing
// value and when handle refuses (it prints why).
template <class Handle>
bool walk_options(int argc, char** argv, const char* switch_flag, bool* switch_seen, Handle handle) {
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == switch_flag) {
      *switch_seen = true;
      continue;
    }
    if (flag == "--help" || flag == "-h") return false;
    if (i + 1 >= argc) {
      std::fprintf(stderr, "flashcute: %s needs a value\n", flag.c_str());
      return false;
    }
    if (!handle(flag, std::string(argv[++i]))) return false;
  }
  return true;
}

bool unknown_option(const std::string& flag) {
  std::fprintf(stderr, "flashcute: unknown option %s\n", flag.c_str());
  return false;
}

bool parse_run(int argc, char** argv, RunOptions* o) {
  return walk_options(argc, argv, "--causal", &o->attn.causal, [&](const std::string& flag, const std::string& value) {
    double num = 0.0;
    if (flag == "--dtype") {
      if (!parse_dtype(value, &o->dtype)) return false;
    } else if (flag == "--backend") {
      if (!parse_backend(value, &o->attn.backend)) return false;
    } else if (flag == "--fwd-workspace") {
      if (!parse_fwd_workspace(value, &o->fwd_workspace, &o->fwd_workspace_zeroed)) return false;
    } else if (!parse_number(flag, value, &num)) {
      return false;
    } else if (flag == "--batch") o->batch = static_cast<int64_t>(num);
    else if (flag == "--seqlen") o->seqlen_q = o->seqlen_k = static_cast<int64_t>(num);
    else if (flag == "--seqlen-q") o->seqlen_q = static_cast<int64_t>(num);
    else if (flag == "--seqlen-k") o->seqlen_k = static_cast<int64_t>(num);
    else if (flag == "--heads") o->heads = static_cast<int64_t>(num);
    else if (flag == "--heads-kv") o->heads_kv = static_cast<int64_t>(num);
    else if (flag == "--d") o->d = static_cast<int64_t>(num);
    else if (flag == "--dv") o->dv = static_cast<int64_t>(num);
    else if (flag == "--window-left") o->attn.window_left = static_cast<int64_t>(num);
    else if (flag == "--window-right") o->attn.window_right = static_cast<int64_t>(num);
    else if (flag == "--softcap") o->attn.softcap = static_cast<float>(num);
    else if (flag == "--scale") o->attn.softmax_scale = static_cast<float>(num);
    else if (flag == "--iters") o->iters = std::max(1, static_cast<int>(num));
    else if (flag == "--check-heads") o->check_heads = std::max(0, static_cast<int>(num));
    else if (flag == "--seed") o->seed = static_cast<uint64_t>(num);
    else return unknown_option(flag);
    return true;
  });
}

bool parse_int_list(const std::string& flag, const std::string& value, std::vector<int64_t>* out) {
  out->clear();
  for (const std::string& item : split_commas(value)) {
    double num = 0.0;
    if (!parse_number(flag, item, &num)) return false;
    if (num < 1 || num != std::floor(num)) {
      std::fprintf(stderr, "flashcute: %s %s is not a positive integer\n", flag.c_str(), item.c_str());
      return false;
    }
    out->push_back(static_cast<int64_t>(num));
  }
  if (out->empty()) std::fprintf(stderr, "flashcute: %s needs at least one value\n", flag.c_str());
  return !out->empty();
}

bool parse_bench(int argc, char** argv, BenchOptions* o) {
  bool no_flush = false;
  const auto handle = [&](const std::string& flag, const std::string& value) {
    double num = 0.0;
    if (flag == "--dtype") {
      o->dtypes.clear();
      for (const std::string& item : split_commas(value)) {
        DType dt;
        if (!parse_dtype(item, &dt)) return false;
        o->dtypes.push_back(dt);
      }
    } else if (flag == "--backend") {
      o->paths.clear();
      for (const std::string& item : split_commas(value)) {
        Backend b;
        if (!parse_backend(item, &b)) return false;
        o->paths.push_back(b);
      }
    } else if (flag == "--causal") {
      if (value == "both") o->causals = {false, true};
      else if (value == "true" || value == "yes") o->causals = {true};
      else if (value == "false" || value == "no") o->causals = {false};
      else {
        std::fprintf(stderr, "flashcute: --causal %s is not both, true or false\n", value.c_str());
        return false;
      }
    } else if (flag == "--pass") {
      o->passes.clear();
      for (const std::string& item : split_commas(value)) {
        const std::string p = item == "fwdbwd" ? "fwd+bwd" : item;
        if (p != "fwd" && p != "bwd" && p != "fwd+bwd") {
          std::fprintf(stderr, "flashcute: --pass %s is not fwd, bwd or fwd+bwd\n", item.c_str());
          return false;
        }
        o->passes.push_back(p);
      }
    } else if (flag == "--fwd-workspace") {
      if (!parse_fwd_workspace(value, &o->fwd_workspace, &o->fwd_workspace_zeroed)) return false;
    } else if (flag == "--deterministic") {
      if (!parse_yes_no(flag, value, &o->deterministic)) return false;
    } else if (flag == "--csv") o->csv = value;
    else if (flag == "--json") o->json = value;
    else if (flag == "--d") {
      if (!parse_int_list(flag, value, &o->head_dims)) return false;
    } else if (flag == "--seqlen") {
      if (!parse_int_list(flag, value, &o->seqlens)) return false;
    } else if (!parse_number(flag, value, &num)) {
      return false;
    } else if (flag == "--tokens") o->tokens = static_cast<int64_t>(num);
    else if (flag == "--hidden") o->hidden = static_cast<int64_t>(num);
    else if (flag == "--warmup") o->warmup = std::max(0, static_cast<int>(num));
    else if (flag == "--iters") o->iters = std::max(1, static_cast<int>(num));
    else if (flag == "--seed") o->seed = static_cast<uint64_t>(num);
    else return unknown_option(flag);
    return true;
  };
  if (!walk_options(argc, argv, "--no-flush", &no_flush, handle)) return false;
  if (no_flush) o->flush = false;
  if (o->dtypes.empty() || o->passes.empty()) {
    std::fprintf(stderr, "flashcute: --dtype and --pass need at least one value\n");
    return false;
  }
  for (int64_t s : o->seqlens)
    if (o->tokens % s != 0) {
      std::fprintf(stderr, "flashcute: --seqlen %lld does not divide --tokens %lld\n", (long long)s,
                   (long long)o->tokens);
      return false;
    }
  for (int64_t d : o->head_dims)
    if (o->hidden % d != 0) {
      std::fprintf(stderr, "flashcute: --d %lld does not divide --hidden %lld\n", (long long)d, (long long)o->hidden);
      return false;
    }
  return true;
}

int gpu_or_explain(cudaDeviceProp* prop) {
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    std::fprintf(stderr, "flashcute: no usable CUDA GPU (%s); this command needs one\n",
                 err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    return 1;
  }
  cudaGetDeviceProperties(prop, 0);
  return 0;
}

int cmd_info() {
  std::printf("flashcute %s\nbuild: %s\n", flashcute::version(), flashcute::build_config());
  cudaDeviceProp prop{};
  if (gpu_or_explain(&prop) != 0) return 1;
  std::printf("device 0: %s (compute capability %d.%d, %d SMs)\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount);
  return 0;
}

#define FC_CUDA_OR_RETURN(expr)                                                      \
  do {                                                                               \
    const cudaError_t e_ = (expr);                                                   \
    if (e_ != cudaSuccess) {                                                         \
      std::fprintf(stderr, "flashcute: %s: %s\n", #expr, cudaGetErrorString(e_));    \
      return 1;                                                                      \
    }                                                                                \
  } while (0)

// Device memory freed on every return path.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(ptr_); }
  // At least `bytes` (one byte for 0, so that the pointer is never null); keeps a larger buffer.
  cudaError_t reserve(size_t bytes) {
    bytes = std::max<size_t>(bytes, 1);
    if (bytes <= bytes_) return cudaSuccess;
    cudaFree(ptr_);
    ptr_ = nullptr;
    bytes_ = 0;
    const cudaError_t err = cudaMalloc(&ptr_, bytes);
    if (err == cudaSuccess) bytes_ = bytes;
    return err;
  }
  void* get() const { return ptr_; }
  size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
};

// Random normal values rounded to the dtype: 16-bit bits for the GPU and, when `values` is given,
// doubles for the reference.
void randn(DType dt, int64_t n, std::mt19937_64& rng, std::vector<uint16_t>* bits, std::vector<double>* values) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  bits->resize(n);
  if (values) values->resize(n);
  for (int64_t i = 0; i < n; ++i) {
    (*bits)[i] = flashcute::numeric::to_bits(dt, normal(rng));
    if (values) (*values)[i] = flashcute::numeric::from_bits(dt, (*bits)[i]);
  }
}

// BENCHMARKING.md: 2*(d + dv) FLOPs per (query, key) pair; halved for causal when seqlen_q == seqlen_k.
double attention_fwd_flops(int64_t batch, int64_t heads, int64_t seqlen_q, int64_t seqlen_k, int64_t d, int64_t dv,
                           bool causal) {
  double flops = 2.0 * static_cast<double>(d + dv) * batch * heads * seqlen_q * seqlen_k;
  return causal && seqlen_q == seqlen_k ? flops / 2 : flops;
}

// `flashcute run`'s count: BENCHMARKING.md's where it applies (no mask, or causal with seqlen_q ==
// seqlen_k), else 2*(d + dv) per (query, key) pair the mask leaves visible, counted row by row
// (windows, causal with seqlen_q != seqlen_k).
double run_fwd_flops(int64_t batch, int64_t heads, int64_t seqlen_q, int64_t seqlen_k, int64_t d, int64_t dv,
                     const flashcute::AttentionOptions& a) {
  const flashcute::Window w = flashcute::make_window(a.causal, a.window_left, a.window_right);
  if (flashcute::window_is_full(w) || (a.causal && w.left < 0 && seqlen_q == seqlen_k))
    return attention_fwd_flops(batch, heads, seqlen_q, seqlen_k, d, dv, a.causal);
  double pairs = 0.0;
  for (int64_t i = 0; i < seqlen_q; ++i) {
    int64_t begin = 0, end = 0;
    flashcute::visible_key_range(i, seqlen_q, seqlen_k, w, &begin, &end);
    pairs += static_cast<double>(end - begin);
  }
  return 2.0 * static_cast<double>(d + dv) * batch * heads * pairs;
}

// Median milliseconds of `iters` launches, each bracketed by CUDA events, after `warmup` launches.
// With `flush`, `flush_bytes` of memset before each timed launch leave the L2 cold (as do_bench).
// Returns the first failing Status of a launch (timing is then meaningless) or ok.
template <class Launch>
flashcute::Status median_ms(Launch&& launch, cudaStream_t stream, int warmup, int iters, void* flush,
                            size_t flush_bytes, double* ms, cudaError_t* cuda_err) {
  *cuda_err = cudaSuccess;
  for (int i = 0; i < warmup; ++i) {
    const flashcute::Status s = launch();
    if (!s.ok()) return s;
  }
  cudaEvent_t start, stop;
  if ((*cuda_err = cudaEventCreate(&start)) != cudaSuccess) return flashcute::Status::Cuda("cudaEventCreate");
  if ((*cuda_err = cudaEventCreate(&stop)) != cudaSuccess) {
    cudaEventDestroy(start);
    return flashcute::Status::Cuda("cudaEventCreate");
  }
  std::vector<float> times(iters);
  flashcute::Status status;
  for (int i = 0; i < iters && status.ok() && *cuda_err == cudaSuccess; ++i) {
    if (flush) cudaMemsetAsync(flush, i & 0xFF, flush_bytes, stream);
    cudaEventRecord(start, stream);
    status = launch();
    cudaEventRecord(stop, stream);
    if ((*cuda_err = cudaEventSynchronize(stop)) == cudaSuccess) cudaEventElapsedTime(&times[i], start, stop);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (!status.ok()) return status;
  if (*cuda_err != cudaSuccess) return flashcute::Status::Cuda(cudaGetErrorString(*cuda_err));
  std::sort(times.begin(), times.end());
  *ms = times[times.size() / 2];
  return status;
}

int cmd_run(const RunOptions& o) {
  cudaDeviceProp prop{};
  if (gpu_or_explain(&prop) != 0) return 1;
  const int64_t hkv = o.heads_kv > 0 ? o.heads_kv : o.heads;
  const int64_t dv = o.dv > 0 ? o.dv : o.d;
  const int64_t nq = o.batch * o.seqlen_q * o.heads * o.d, nk = o.batch * o.seqlen_k * hkv * o.d;
  const int64_t nv = o.batch * o.seqlen_k * hkv * dv, no = o.batch * o.seqlen_q * o.heads * dv;
  const int64_t nlse = o.batch * o.heads * o.seqlen_q;

  std::mt19937_64 rng(o.seed);
  std::vector<uint16_t> hq, hk, hv;
  std::vector<double> vq, vk, vv;
  randn(o.dtype, nq, rng, &hq, &vq);
  randn(o.dtype, nk, rng, &hk, &vk);
  randn(o.dtype, nv, rng, &hv, &vv);

  DeviceBuffer q, k, v, out, lse;
  FC_CUDA_OR_RETURN(q.reserve(nq * 2));
  FC_CUDA_OR_RETURN(k.reserve(nk * 2));
  FC_CUDA_OR_RETURN(v.reserve(nv * 2));
  FC_CUDA_OR_RETURN(out.reserve(no * 2));
  FC_CUDA_OR_RETURN(lse.reserve(nlse * sizeof(float)));
  FC_CUDA_OR_RETURN(cudaMemcpy(q.get(), hq.data(), nq * 2, cudaMemcpyHostToDevice));
  FC_CUDA_OR_RETURN(cudaMemcpy(k.get(), hk.data(), nk * 2, cudaMemcpyHostToDevice));
  FC_CUDA_OR_RETURN(cudaMemcpy(v.get(), hv.data(), nv * 2, cudaMemcpyHostToDevice));
  FC_CUDA_OR_RETURN(cudaMemset(out.get(), 0xFF, no * 2));  // NaN: an unwritten element fails the check

  flashcute::FwdArgs args;
  args.q = flashcute::make_tensor_4d(q.get(), o.dtype, o.batch, o.seqlen_q, o.heads, o.d);
  args.k = flashcute::make_tensor_4d(k.get(), o.dtype, o.batch, o.seqlen_k, hkv, o.d);
  args.v = flashcute::make_tensor_4d(v.get(), o.dtype, o.batch, o.seqlen_k, hkv, dv);
  args.out = flashcute::make_tensor_4d(out.get(), o.dtype, o.batch, o.seqlen_q, o.heads, dv);
  args.lse = flashcute::make_tensor_3d(lse.get(), DType::kFloat32, o.batch, o.heads, o.seqlen_q);
  args.options = o.attn;
  cudaStream_t stream;
  FC_CUDA_OR_RETURN(cudaStreamCreate(&stream));
  args.stream = reinterpret_cast<flashcute::Stream>(stream);
  // The forward's optional workspace (validation errors are reported by the call below).
  DeviceBuffer workspace;
  size_t ws_bytes = 0;
  if (o.fwd_workspace && flashcute::fwd_workspace_size(args, &ws_bytes).ok() && ws_bytes > 0) {
    FC_CUDA_OR_RETURN(workspace.reserve(ws_bytes));
    if (o.fwd_workspace_zeroed) FC_CUDA_OR_RETURN(cudaMemset(workspace.get(), 0, workspace.bytes()));
    args.workspace = {workspace.get(), workspace.bytes(), o.fwd_workspace_zeroed};
  }

  // First call: correctness (and warm-up).
  flashcute::Status s = flashcute::fwd(args);
  if (!s.ok()) {
    std::fprintf(stderr, "flashcute run: %s: %s\n", flashcute::to_string(s.code()), s.message().c_str());
    return 2;
  }
  FC_CUDA_OR_RETURN(cudaStreamSynchronize(stream));
  std::vector<uint16_t> hout(no);
  std::vector<float> hlse(nlse);
  FC_CUDA_OR_RETURN(cudaMemcpy(hout.data(), out.get(), no * 2, cudaMemcpyDeviceToHost));
  FC_CUDA_OR_RETURN(cudaMemcpy(hlse.data(), lse.get(), nlse * sizeof(float), cudaMemcpyDeviceToHost));

  // Timing: median of `iters` launches, each bracketed by CUDA events, after 3 warm-up launches.
  double median = 0.0;
  cudaError_t cuda_err = cudaSuccess;
  s = median_ms([&] { return flashcute::fwd(args); }, stream, 3, o.iters, nullptr, 0, &median, &cuda_err);
  FC_CUDA_OR_RETURN(cuda_err);
  if (!s.ok()) {
    std::fprintf(stderr, "flashcute run: %s: %s\n", flashcute::to_string(s.code()), s.message().c_str());
    return 2;
  }
  // After the timed launches, one more: its out must equal the first call's bit for bit (each tile's
  // arithmetic does not depend on which CTA runs it), and a zeroed workspace must read zero again.
  s = flashcute::fwd(args);
  if (!s.ok()) {
    std::fprintf(stderr, "flashcute run: %s: %s\n", flashcute::to_string(s.code()), s.message().c_str());
    return 2;
  }
  FC_CUDA_OR_RETURN(cudaStreamSynchronize(stream));
  std::vector<uint16_t> hout_last(no);
  FC_CUDA_OR_RETURN(cudaMemcpy(hout_last.data(), out.get(), no * 2, cudaMemcpyDeviceToHost));
  const bool repeat_ok = hout_last == hout;
  bool workspace_ok = true;
  if (o.fwd_workspace_zeroed && workspace.get() != nullptr) {
    std::vector<unsigned char> hws(workspace.bytes());
    FC_CUDA_OR_RETURN(cudaMemcpy(hws.data(), workspace.get(), hws.size(), cudaMemcpyDeviceToHost));
    for (const unsigned char c : hws) workspace_ok = workspace_ok && c == 0;
  }
  const double flops = run_fwd_flops(o.batch, o.heads, o.seqlen_q, o.seqlen_k, o.d, dv, o.attn);
  // Check: the first and last (batch, head) pairs (up to --check-heads) against the fp64 reference.
  double max_err = 0.0, max_lp_err = 0.0, max_lse_err = 0.0, max_lse_ratio = 0.0, max_golden = 0.0;
  bool all_finite_where_expected = true;
  flashcute::ref::set_num_threads(static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  for (int c = 0; c < o.check_heads && c < o.batch * o.heads; ++c) {
    const int64_t pair = c == 0 ? 0 : o.batch * o.heads - c;  // first, then from the end
    const int64_t b = pair / o.heads, h = pair % o.heads, hk_idx = h / (o.heads / hkv);
    flashcute::ref::Problem p;
    p.batch = 1, p.heads_q = 1, p.heads_kv = 1;
    p.seqlen_q = o.seqlen_q, p.seqlen_k = o.seqlen_k, p.head_dim = o.d, p.head_dim_v = dv;
    p.softmax_scale = o.attn.softmax_scale.value_or(0.0f);
    p.causal = o.attn.causal, p.window_left = o.attn.window_left, p.window_right = o.attn.window_right;
    p.softcap = o.attn.softcap;
    const flashcute::ref::ConstView rq{vq.data() + (b * o.seqlen_q * o.heads + h) * o.d, 0, o.heads * o.d, 0};
    const flashcute::ref::ConstView rk{vk.data() + (b * o.seqlen_k * hkv + hk_idx) * o.d, 0, hkv * o.d, 0};
    const flashcute::ref::ConstView rv{vv.data() + (b * o.seqlen_k * hkv + hk_idx) * dv, 0, hkv * dv, 0};
    std::vector<double> golden(o.seqlen_q * dv), lp(o.seqlen_q * dv), glse(o.seqlen_q), lplse(o.seqlen_q);
    flashcute::ref::forward(p, rq, rk, rv, flashcute::ref::MutView{golden.data(), 0, dv, 0}, glse.data());
    flashcute::ref::forward_lowp(o.dtype, p, rq, rk, rv, flashcute::ref::MutView{lp.data(), 0, dv, 0}, lplse.data());
    for (int64_t i = 0; i < o.seqlen_q; ++i) {
      for (int64_t j = 0; j < dv; ++j) {
        const double got = flashcute::numeric::from_bits(o.dtype, hout[((b * o.seqlen_q + i) * o.heads + h) * dv + j]);
        const double g = golden[i * dv + j];
        if (std::isfinite(g) != std::isfinite(got)) all_finite_where_expected = false;
        max_err = std::max(max_err, std::fabs(got - g));
        if (std::isfinite(g)) max_golden = std::max(max_golden, std::fabs(g));
        max_lp_err = std::max(max_lp_err, std::fabs(lp[i * dv + j] - g));
      }
      const double l = hlse[(b * o.heads + h) * o.seqlen_q + i];
      if (std::isfinite(glse[i])) {
        max_lse_err = std::max(max_lse_err, std::fabs(l - glse[i]));
        // TESTING.md's LSE rule, element by element: |lse - golden| <= 1e-5 (1 + |golden|).
        max_lse_ratio = std::max(max_lse_ratio, std::fabs(l - glse[i]) / (1e-5 * (1.0 + std::fabs(glse[i]))));
      } else if (l != glse[i]) {
        all_finite_where_expected = false;
      }
    }
  }

  std::printf("flashcute run: %s b=%lld sq=%lld sk=%lld h=%lld/%lld d=%lld dv=%lld causal=%d on %s\n",
              dtype_name(o.dtype), (long long)o.batch, (long long)o.seqlen_q,
              (long long)o.seqlen_k, (long long)o.heads, (long long)hkv, (long long)o.d, (long long)dv,
              o.attn.causal ? 1 : 0, prop.name);
  std::printf("  time %.3f ms (median of %d), %.1f TFLOP/s\n", median, o.iters, flops / (median * 1e-3) / 1e12);
  if (o.check_heads > 0)
    std::printf("  check (%d heads vs fp64): max|out-golden| %.3g (unfused %s: %.3g), max|lse-golden| %.3g "
                "(%.2g of the rule's bound), %s\n",
                std::min<int>(o.check_heads, static_cast<int>(o.batch * o.heads)), max_err,
                dtype_name(o.dtype), max_lp_err, max_lse_err, max_lse_ratio,
                all_finite_where_expected ? "non-finite parity ok" : "NON-FINITE MISMATCH");
  std::printf("  repeat: the last launch's out %s the first's%s\n", repeat_ok ? "equals" : "DIFFERS FROM",
              !o.fwd_workspace_zeroed ? "" : workspace_ok ? "; zeroed workspace reads zero" : "; ZEROED WORKSPACE NOT ZERO");
  // Pass/fail for scripts: TESTING.md's max rule for out (2x the unfused error + 2 ulp at max|golden|)
  // and its LSE rule (above; an absolute 1e-3 was tighter than fp32 holds at huge logits, and looser
  // than the rule at ordinary ones).
  const int mantissa = o.dtype == DType::kBFloat16 ? 7 : 10;
  const double ulp2 = max_golden > 0 ? 2.0 * std::ldexp(1.0, std::ilogb(max_golden) - mantissa) : 0.0;
  const bool ok = all_finite_where_expected && max_err <= 2.0 * max_lp_err + ulp2 && max_lse_ratio <= 1.0 &&
                  repeat_ok && workspace_ok;
  return ok ? 0 : 3;
}


// ---- flashcute bench ----------------------------------------------------------------------------------
struct BenchRecord {
  std::string impl, pass, status = "ok", error;
  DType dtype = DType::kBFloat16;
  int64_t d = 0, seqlen = 0, batch = 0, heads = 0;
  bool causal = false;
  double flops = 0.0, ms = 0.0;
  int reps = 0;
  double tflops() const { return status == "ok" && ms > 0 ? flops / (ms * 1e-3) / 1e12 : 0.0; }
};

const char* path_impl(Backend b) {
  switch (b) {
    case Backend::kSm80: return "flashcute_sm80";
    case Backend::kSm90: return "flashcute_sm90";
    case Backend::kAuto: return "flashcute_auto";
  }
  return "flashcute_unknown";
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
    } else out += c;
  }
  return out + "\"";
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (const char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

std::string utc_now() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

bool write_bench_csv(const std::string& path, const std::vector<BenchRecord>& records) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  std::fprintf(f, "impl,dtype,d,causal,seqlen,batch,heads,pass,flops,ms,tflops,reps,status,error\n");
  for (const BenchRecord& r : records)
    std::fprintf(f, "%s,%s,%lld,%d,%lld,%lld,%lld,%s,%.0f,%.5f,%.2f,%d,%s,%s\n", r.impl.c_str(), dtype_name(r.dtype),
                 (long long)r.d, r.causal ? 1 : 0, (long long)r.seqlen, (long long)r.batch, (long long)r.heads,
                 r.pass.c_str(), r.flops, r.ms, r.tflops(), r.reps, r.status.c_str(), csv_field(r.error).c_str());
  return std::fclose(f) == 0;
}

// The schema of bench/bench.py (flashcute-bench/1), so that `bench.py --merge` joins the two.
bool write_bench_json(const std::string& path, const std::vector<BenchRecord>& records, const cudaDeviceProp& prop,
                      const BenchOptions& o, const std::string& date, const std::string& argv) {
  FILE* f = std::fopen(path.c_str(), "w");
  if (!f) return false;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);
  cudaRuntimeGetVersion(&runtime);
  std::fprintf(f,
               "{\"schema\": \"flashcute-bench/1\", \"stopped_early\": null,\n \"meta\": {\"runs\": [{\"date\": %s, "
               "\"device\": %s, \"capability\": \"%d.%d\", \"sm_count\": %d, \"cuda_driver_api\": %d, "
               "\"cuda_runtime\": %d, \"flashcute\": %s, \"flashcute_build\": %s, \"tool\": \"flashcute bench\", "
               "\"method\": %s, \"argv\": %s}]},\n \"records\": [",
               json_string(date).c_str(), json_string(prop.name).c_str(), prop.major, prop.minor,
               prop.multiProcessorCount, driver, runtime, json_string(flashcute::version()).c_str(),
               json_string(flashcute::build_config()).c_str(),
               json_string("CUDA events per launch, median of " + std::to_string(o.iters) + " after " +
                           std::to_string(o.warmup) + " warm-up launches; L2 flush " + (o.flush ? "on" : "off") +
                           "; forward workspace " +
                           (!o.fwd_workspace ? "not given" : o.fwd_workspace_zeroed ? "given, zeroed once" : "given") +
                           "; backward " + (o.deterministic ? "deterministic" : "default (atomic dQ adds)"))
                   .c_str(),
               json_string(argv).c_str());
  for (size_t i = 0; i < records.size(); ++i) {
    const BenchRecord& r = records[i];
    const bool ok = r.status == "ok";
    std::fprintf(f,
                 "%s\n  {\"impl\": \"%s\", \"dtype\": \"%s\", \"d\": %lld, \"causal\": %s, \"seqlen\": %lld, "
                 "\"batch\": %lld, \"heads\": %lld, \"pass\": \"%s\", \"flops\": %.0f, \"status\": \"%s\", ",
                 i ? "," : "", r.impl.c_str(), dtype_name(r.dtype), (long long)r.d, r.causal ? "true" : "false",
                 (long long)r.seqlen, (long long)r.batch, (long long)r.heads, r.pass.c_str(), r.flops,
                 r.status.c_str());
    if (ok) std::fprintf(f, "\"ms\": %.6f, \"tflops\": %.3f, \"reps\": %d, ", r.ms, r.tflops(), r.reps);
    else std::fprintf(f, "\"ms\": null, \"tflops\": null, \"reps\": null, ");
    std::fprintf(f, "\"peak_mem_bytes\": null, \"spot\": null, \"error\": %s}",
                 ok ? "null" : json_string(r.error).c_str());
  }
  std::fprintf(f, "\n ]}\n");
  return std::fclose(f) == 0;
}

int cmd_bench(const BenchOptions& o, const std::string& argv) {
  cudaDeviceProp prop{};
  if (gpu_or_explain(&prop) != 0) return 1;
  std::vector<Backend> paths = o.paths;
  if (paths.empty()) {
    paths.push_back(Backend::kSm80);
    if (prop.major == 9) paths.push_back(Backend::kSm90);
  }
  const std::string date = utc_now();
  std::printf("flashcute bench: %s (cc %d.%d, %d SMs), flashcute %s [%s], %s\n", prop.name, prop.major, prop.minor,
              prop.multiProcessorCount, flashcute::version(), flashcute::build_config(), date.c_str());

  // Every case of the grid has tokens x hidden elements in q, k, v, out, dout, dq, dk, dv: one allocation
  // each serves the whole run.
  const int64_t n = o.tokens * o.hidden;
  const int64_t nlse = n / *std::min_element(o.head_dims.begin(), o.head_dims.end());
  DeviceBuffer q, k, v, out, dout, dq, dk, dv, lse, workspace, fwd_zeroed_ws, flush;
  for (DeviceBuffer* b : {&q, &k, &v, &out, &dout, &dq, &dk, &dv}) FC_CUDA_OR_RETURN(b->reserve(n * 2));
  FC_CUDA_OR_RETURN(lse.reserve(nlse * sizeof(float)));
  const size_t flush_bytes = o.flush ? size_t{256} << 20 : 0;  // more than the L2 of any current GPU
  if (o.flush) FC_CUDA_OR_RETURN(flush.reserve(flush_bytes));
  cudaStream_t stream;
  FC_CUDA_OR_RETURN(cudaStreamCreate(&stream));

  std::mt19937_64 rng(o.seed);
  std::vector<BenchRecord> records;
  int failures = 0;
  for (const DType dt : o.dtypes) {
    std::vector<uint16_t> bits;
    for (DeviceBuffer* b : {&q, &k, &v, &dout}) {
      randn(dt, n, rng, &bits, nullptr);
      FC_CUDA_OR_RETURN(cudaMemcpy(b->get(), bits.data(), n * 2, cudaMemcpyHostToDevice));
    }
    for (const int64_t d : o.head_dims) {
      for (const bool causal : o.causals) {
        for (const int64_t seqlen : o.seqlens) {
          const int64_t batch = o.tokens / seqlen, heads = o.hidden / d;
          flashcute::FwdArgs fa;
          fa.q = flashcute::make_tensor_4d(q.get(), dt, batch, seqlen, heads, d);
          fa.k = flashcute::make_tensor_4d(k.get(), dt, batch, seqlen, heads, d);
          fa.v = flashcute::make_tensor_4d(v.get(), dt, batch, seqlen, heads, d);
          fa.out = flashcute::make_tensor_4d(out.get(), dt, batch, seqlen, heads, d);
          fa.lse = flashcute::make_tensor_3d(lse.get(), DType::kFloat32, batch, heads, seqlen);
          fa.options.causal = causal;
          fa.stream = reinterpret_cast<flashcute::Stream>(stream);
          flashcute::BwdArgs ba;
          ba.q = fa.q, ba.k = fa.k, ba.v = fa.v, ba.out = fa.out, ba.lse = fa.lse;
          ba.dout = flashcute::make_tensor_4d(dout.get(), dt, batch, seqlen, heads, d);
          ba.dq = flashcute::make_tensor_4d(dq.get(), dt, batch, seqlen, heads, d);
          ba.dk = flashcute::make_tensor_4d(dk.get(), dt, batch, seqlen, heads, d);
          ba.dv = flashcute::make_tensor_4d(dv.get(), dt, batch, seqlen, heads, d);
          ba.options = fa.options;
          ba.options.deterministic = o.deterministic;
          ba.stream = fa.stream;
          const double fwd_flops = attention_fwd_flops(batch, heads, seqlen, seqlen, d, d, causal);
          for (const Backend path : paths) {
            // The SM90 path has a forward only: its backward passes run "auto" (the SM80 backward), as
            // bench/bench.py does, so that the fwd+bwd of each path is what a user of that path gets.
            fa.options.backend = path;
            ba.options.backend = path == Backend::kSm90 ? Backend::kAuto : path;
            size_t fwd_ws = 0, bwd_ws = 0;
            flashcute::Status fwd_status = flashcute::fwd_workspace_size(fa, &fwd_ws);
            flashcute::Status bwd_status = flashcute::bwd_workspace_size(ba, &bwd_ws);
            FC_CUDA_OR_RETURN(workspace.reserve(std::max(fwd_ws, bwd_ws)));
            fa.workspace = o.fwd_workspace ? flashcute::Workspace{workspace.get(), workspace.bytes()}
                                           : flashcute::Workspace{};
            if (o.fwd_workspace && o.fwd_workspace_zeroed && fwd_ws > 0) {
              // Its own buffer (the backward writes the shared one), zeroed here; the forward keeps it zero.
              FC_CUDA_OR_RETURN(fwd_zeroed_ws.reserve(fwd_ws));
              FC_CUDA_OR_RETURN(cudaMemset(fwd_zeroed_ws.get(), 0, fwd_zeroed_ws.bytes()));
              fa.workspace = flashcute::Workspace{fwd_zeroed_ws.get(), fwd_zeroed_ws.bytes(), true};
            }
            ba.workspace = {workspace.get(), workspace.bytes()};
            // One forward first: it checks the path takes the case and writes the out and lse that the
            // backward reads.
            if (fwd_status.ok()) fwd_status = flashcute::fwd(fa);
            FC_CUDA_OR_RETURN(cudaStreamSynchronize(stream));
            for (const std::string& pass : o.passes) {
              BenchRecord r;
              r.impl = path_impl(path), r.pass = pass, r.dtype = dt, r.d = d, r.seqlen = seqlen, r.batch = batch;
              r.heads = heads, r.causal = causal;
              r.flops = fwd_flops * (pass == "fwd" ? 1.0 : pass == "bwd" ? 2.5 : 3.5);
              flashcute::Status s = fwd_status;
              if (s.ok() && pass != "fwd") s = bwd_status;
              if (s.ok()) {
                auto launch = [&]() -> flashcute::Status {
                  if (pass == "fwd") return flashcute::fwd(fa);
                  if (pass == "bwd") return flashcute::bwd(ba);
                  const flashcute::Status f = flashcute::fwd(fa);
                  return f.ok() ? flashcute::bwd(ba) : f;
                };
                cudaError_t cuda_err = cudaSuccess;
                s = median_ms(launch, stream, o.warmup, o.iters, flush.get(), flush_bytes, &r.ms, &cuda_err);
                FC_CUDA_OR_RETURN(cuda_err);
                r.reps = o.iters;
              }
              if (!s.ok()) {
                r.status = s.code() == flashcute::StatusCode::kNotSupported ? "unsupported" : "error";
                r.error = std::string(flashcute::to_string(s.code())) + ": " + s.message();
                if (r.status == "error") ++failures;
              }
              if (r.status == "ok")
                std::printf("%s d%-3lld %-6s s%-5lld %-7s %-14s %9.3f ms %7.1f TFLOP/s\n", dtype_name(dt),
                            (long long)d, causal ? "causal" : "full", (long long)seqlen, pass.c_str(), r.impl.c_str(),
                            r.ms, r.tflops());
              else
                std::printf("%s d%-3lld %-6s s%-5lld %-7s %-14s %s (%s)\n", dtype_name(dt), (long long)d,
                            causal ? "causal" : "full", (long long)seqlen, pass.c_str(), r.impl.c_str(),
                            r.status.c_str(), r.error.c_str());
              std::fflush(stdout);
              records.push_back(r);
            }
          }
        }
      }
    }
  }
  cudaStreamDestroy(stream);
  if (!o.csv.empty() && !write_bench_csv(o.csv, records)) {
    std::fprintf(stderr, "flashcute bench: cannot write %s\n", o.csv.c_str());
    return 1;
  }
  if (!o.json.empty() && !write_bench_json(o.json, records, prop, o, date, argv)) {
    std::fprintf(stderr, "flashcute bench: cannot write %s\n", o.json.c_str());
    return 1;
  }
  if (failures) std::fprintf(stderr, "flashcute bench: %d measurement(s) failed (status error)\n", failures);
  return failures ? 2 : 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    usage(stderr);
    return 64;
  }
  const std::string cmd = argv[1];
  if (cmd == "info") return cmd_info();
  if (cmd == "run") {
    RunOptions o;
    if (!parse_run(argc, argv, &o)) {
      usage(stderr);
      return 64;
    }
    return cmd_run(o);
  }
  if (cmd == "bench") {
    BenchOptions o;
    if (!parse_bench(argc, argv, &o)) {
      usage(stderr);
      return 64;
    }
    std::string line = "flashcute";
    for (int i = 1; i < argc; ++i) line += std::string(" ") + argv[i];
    return cmd_bench(o, line);
  }
  if (cmd == "--help" || cmd == "-h" || cmd == "help") {
    usage(stdout);
    return 0;
  }
  std::fprintf(stderr, "flashcute: unknown command '%s'\n", cmd.c_str());
  usage(stderr);
  return 64;
}
