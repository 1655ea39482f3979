//===- runtime_module.cpp - kiln._runtime: the C runtime API in Python ----===//
//
// A thin nanobind layer over kiln/runtime.h: a Model (an opened artifact)
// and a Session (a model on a device) that takes and returns arrays through
// DLPack (NumPy, PyTorch, ...). Every failure raises kiln.KilnError with the
// runtime's message and status. The Python API (kiln/__init__.py) is built
// on this.
//
//===----------------------------------------------------------------------===//
#include "kiln/runtime.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

/// What kiln.KilnError carries: the status and the runtime's message.
struct KilnError : std::runtime_error {
  KilnError(kiln_status status, const std::string &message)
      : std::runtime_error(message), status(status) {}
  kiln_status status;
};

void check(kiln_status status) {
  if (status != KILN_OK)
    throw KilnError(status, std::string(kiln_status_string(status)) + ": " +
                                kiln_last_error());
}

/// NumPy's name for a Kiln dtype ("float32", ...); bfloat16 has none.
const char *numpyName(kiln_dtype dtype) {
  switch (dtype) {
  case KILN_DTYPE_F32:
    return "float32";
  case KILN_DTYPE_F16:
    return "float16";
  case KILN_DTYPE_BF16:
    return "bfloat16";
  case KILN_DTYPE_F64:
    return "float64";
  case KILN_DTYPE_I8:
    return "int8";
  case KILN_DTYPE_U8:
    return "uint8";
  case KILN_DTYPE_I16:
    return "int16";
  case KILN_DTYPE_U16:
    return "uint16";
  case KILN_DTYPE_I32:
    return "int32";
  case KILN_DTYPE_U32:
    return "uint32";
  case KILN_DTYPE_I64:
    return "int64";
  case KILN_DTYPE_U64:
    return "uint64";
  case KILN_DTYPE_BOOL:
    return "bool";
  }
  return "unknown";
}

nb::dlpack::dtype dlpackOf(kiln_dtype dtype) {
  using nb::dlpack::dtype_code;
  auto make = [](dtype_code code, int bits) {
    return nb::dlpack::dtype{uint8_t(code), uint8_t(bits), 1};
  };
  switch (dtype) {
  case KILN_DTYPE_F32:
    return make(dtype_code::Float, 32);
  case KILN_DTYPE_F16:
    return make(dtype_code::Float, 16);
  case KILN_DTYPE_BF16:
    return make(dtype_code::Bfloat, 16);
  case KILN_DTYPE_F64:
    return make(dtype_code::Float, 64);
  case KILN_DTYPE_I8:
    return make(dtype_code::Int, 8);
  case KILN_DTYPE_U8:
    return make(dtype_code::UInt, 8);
  case KILN_DTYPE_I16:
    return make(dtype_code::Int, 16);
  case KILN_DTYPE_U16:
    return make(dtype_code::UInt, 16);
  case KILN_DTYPE_I32:
    return make(dtype_code::Int, 32);
  case KILN_DTYPE_U32:
    return make(dtype_code::UInt, 32);
  case KILN_DTYPE_I64:
    return make(dtype_code::Int, 64);
  case KILN_DTYPE_U64:
    return make(dtype_code::UInt, 64);
  case KILN_DTYPE_BOOL:
    return make(dtype_code::Bool, 8);
  }
  return make(dtype_code::Float, 32);
}

/// One input or output: its name, NumPy dtype name and shape.
struct TensorInfo {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  kiln_dtype kilnDtype;
};

TensorInfo infoOf(const kiln_tensor_info &info) {
  return {info.name, numpyName(info.dtype),
          std::vector<int64_t>(info.shape, info.shape + info.rank), info.dtype};
}

/// One kernel launch of the schedule.
struct DispatchInfo {
  std::string kernel;
  std::vector<std::string> nodes;
  uint32_t workgroups;
  uint64_t flops, bytes;
};

class Model {
public:
  static std::shared_ptr<Model> open(const std::string &path) {
    kiln_model *model = nullptr;
    check(kiln_model_open(path.c_str(), &model));
    return std::shared_ptr<Model>(new Model(model));
  }
  static std::shared_ptr<Model> fromBytes(nb::bytes data) {
    kiln_model *model = nullptr;
    check(kiln_model_open_memory(data.c_str(), data.size(), &model));
    return std::shared_ptr<Model>(new Model(model));
  }
  ~Model() { kiln_model_close(model); }

  std::vector<TensorInfo> inputs() const {
    std::vector<TensorInfo> out;
    for (int32_t i = 0; i < kiln_model_input_count(model); ++i) {
      kiln_tensor_info info;
      check(kiln_model_input_info(model, i, &info));
      out.push_back(infoOf(info));
    }
    return out;
  }
  std::vector<TensorInfo> outputs() const {
    std::vector<TensorInfo> out;
    for (int32_t i = 0; i < kiln_model_output_count(model); ++i) {
      kiln_tensor_info info;
      check(kiln_model_output_info(model, i, &info));
      out.push_back(infoOf(info));
    }
    return out;
  }
  std::vector<DispatchInfo> dispatches() const {
    std::vector<DispatchInfo> out;
    for (int32_t i = 0; i < kiln_model_dispatch_count(model); ++i) {
      kiln_dispatch_info info;
      check(kiln_model_dispatch_info(model, i, &info));
      out.push_back(
          {info.kernel,
           std::vector<std::string>(info.nodes, info.nodes + info.node_count),
           info.workgroups, info.flops, kiln_model_dispatch_bytes(model, i)});
    }
    return out;
  }

  kiln_model *model;

private:
  explicit Model(kiln_model *model) : model(model) {}
};

/// Inputs are only read: read-only arrays (np.frombuffer) are taken too.
using Array = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
/// GPU tensors (CUDA or ROCm memory) handed over through DLPack.
using DeviceArray = nb::ndarray<nb::ro, nb::c_contig>;
using WritableDeviceArray = nb::ndarray<nb::c_contig>;

/// The device pointer of a DLPack tensor on a GPU (device 0, the one a
/// session runs on), or KilnError naming `what`.
template <typename T>
uint64_t devicePointerOf(const T &array, const std::string &what) {
  int type = array.device_type();
  if (type != nb::device::cuda::value && type != nb::device::rocm::value)
    throw KilnError(KILN_ERROR_INVALID_ARGUMENT,
                    what + " is not in CUDA or ROCm memory");
  if (array.device_id() != 0)
    throw KilnError(KILN_ERROR_INVALID_ARGUMENT,
                    what + " is on GPU " + std::to_string(array.device_id()) +
                        "; sessions run on GPU 0");
  return uint64_t(uintptr_t(array.data()));
}

class Session {
public:
  Session(std::shared_ptr<Model> model, const std::string &device, int threads,
          uint64_t maxMemory)
      : model(std::move(model)) {
    kiln_session_options options{threads, maxMemory};
    check(kiln_session_create(this->model->model, device.c_str(), &options,
                              &session));
  }
  ~Session() { kiln_session_destroy(session); }

  void setInput(const std::string &name, Array array) {
    TensorInfo input = findInput(name, array.dtype());
    std::vector<int64_t> shape = shapeOf(array);
    check(kiln_session_set_input(session, name.c_str(), input.kilnDtype,
                                 shape.data(), int32_t(shape.size()),
                                 array.data(), array.nbytes()));
  }

  /// setInput for a tensor in GPU memory, which the kernels read in place
  /// (kiln_session_set_input_device).
  void setInputDevice(const std::string &name, DeviceArray array) {
    TensorInfo input = findInput(name, array.dtype());
    uint64_t pointer = devicePointerOf(array, "input '" + name + "'");
    std::vector<int64_t> shape = shapeOf(array);
    check(kiln_session_set_input_device(session, name.c_str(), input.kilnDtype,
                                        shape.data(), int32_t(shape.size()),
                                        pointer, array.nbytes()));
  }

  /// Output `index` of later runs goes to `array`, a tensor in GPU memory
  /// of its dtype and shape (kiln_session_bind_output_device); None unbinds.
  void bindOutputDevice(int32_t index,
                        std::optional<WritableDeviceArray> array) {
    if (!array) {
      check(kiln_session_bind_output_device(session, index, 0, 0));
      return;
    }
    kiln_tensor_info info;
    check(kiln_session_output_info(session, index, &info));
    std::string what = std::string("output '") + info.name + "'";
    if (array->dtype() != dlpackOf(info.dtype))
      throw KilnError(KILN_ERROR_DTYPE_MISMATCH,
                      what + " is " + kiln_dtype_name(info.dtype) +
                          "; the destination tensor's dtype differs");
    std::vector<int64_t> shape = shapeOf(*array);
    if (shape != std::vector<int64_t>(info.shape, info.shape + info.rank))
      throw KilnError(KILN_ERROR_SHAPE_MISMATCH,
                      what + " has another shape than the destination tensor");
    check(kiln_session_bind_output_device(
        session, index, devicePointerOf(*array, what + "'s destination"),
        info.bytes));
  }

  void run() {
    nb::gil_scoped_release released;
    check(kiln_session_run(session));
  }

  /// Runs once, timing each dispatch: milliseconds per launch.
  std::vector<double> runProfiled() {
    std::vector<double> ms(kiln_model_dispatch_count(model->model));
    nb::gil_scoped_release released;
    check(kiln_session_run_profiled(session, ms.data(), int32_t(ms.size())));
    return ms;
  }

  /// Output `index` of the last run, copied into a new array.
  nb::ndarray<nb::numpy> output(int32_t index) {
    kiln_tensor_info info;
    check(kiln_session_output_info(session, index, &info));
    size_t bytes = info.bytes;
    auto *data = new uint8_t[bytes ? bytes : 1];
    nb::capsule owner(
        data, [](void *p) noexcept { delete[] static_cast<uint8_t *>(p); });
    check(kiln_session_get_output_at(session, index, data, bytes));
    std::vector<size_t> shape(info.shape, info.shape + info.rank);
    return nb::ndarray<nb::numpy>(data, shape.size(), shape.data(), owner,
                                  nullptr, dlpackOf(info.dtype));
  }

  int threads() const { return kiln_session_num_threads(session); }

private:
  /// Input `name`, whose dtype must be `dtype`.
  TensorInfo findInput(const std::string &name, nb::dlpack::dtype dtype) const {
    for (const TensorInfo &info : model->inputs()) {
      if (info.name != name)
        continue;
      if (dtype != dlpackOf(info.kilnDtype))
        throw KilnError(KILN_ERROR_DTYPE_MISMATCH,
                        "input '" + name + "' must be " + info.dtype);
      return info;
    }
    throw KilnError(KILN_ERROR_NOT_FOUND,
                    "the model has no input '" + name + "'");
  }

  template <typename T> static std::vector<int64_t> shapeOf(const T &array) {
    std::vector<int64_t> shape(array.ndim());
    for (size_t d = 0; d < array.ndim(); ++d)
      shape[d] = array.shape(d);
    return shape;
  }

  std::shared_ptr<Model> model;
  kiln_session *session = nullptr;
};

} // namespace

NB_MODULE(_runtime, m) {
  m.doc() = "Kiln's runtime: open .kiln artifacts and run them.";
  nb::exception<KilnError> error(m, "KilnError");
  m.def("version", &kiln_version,
        "This runtime's version: 'kiln X.Y.Z (commit ...)'.");

  nb::class_<TensorInfo>(m, "TensorInfo",
                         "A model input or output: name, dtype, shape.")
      .def_ro("name", &TensorInfo::name)
      .def_ro("dtype", &TensorInfo::dtype, "NumPy's name of the dtype.")
      .def_prop_ro(
          "shape",
          [](const TensorInfo &t) {
            nb::list shape;
            for (int64_t d : t.shape)
              shape.append(d);
            return nb::tuple(shape);
          },
          "The dims, as a tuple.")
      .def("__repr__", [](const TensorInfo &t) {
        std::string dims;
        for (int64_t d : t.shape)
          dims += (dims.empty() ? "" : ", ") + std::to_string(d);
        return "TensorInfo(name='" + t.name + "', dtype='" + t.dtype +
               "', shape=(" + dims + (t.shape.size() == 1 ? ",))" : "))");
      });

  nb::class_<DispatchInfo>(m, "DispatchInfo",
                           "One kernel launch of the schedule.")
      .def_ro("kernel", &DispatchInfo::kernel)
      .def_ro("nodes", &DispatchInfo::nodes, "The ONNX nodes it computes.")
      .def_ro("workgroups", &DispatchInfo::workgroups)
      .def_ro("flops", &DispatchInfo::flops, "0 when unknown.")
      .def_ro("bytes", &DispatchInfo::bytes,
              "Bytes of every buffer it reads or writes.");

  nb::class_<Model>(m, "Model", "An opened .kiln artifact.")
      .def_static("open", &Model::open, nb::arg("path"))
      .def_static("from_bytes", &Model::fromBytes, nb::arg("data"))
      .def_prop_ro("inputs", &Model::inputs)
      .def_prop_ro("outputs", &Model::outputs)
      .def_prop_ro("dispatches", &Model::dispatches)
      .def_prop_ro("target",
                   [](const Model &m) { return kiln_model_target(m.model); })
      .def_prop_ro("producer",
                   [](const Model &m) { return kiln_model_producer(m.model); })
      .def_prop_ro("cpu",
                   [](const Model &m) { return kiln_model_cpu(m.model); })
      .def_prop_ro("cpu_features", [](const Model &m) {
        return kiln_model_cpu_features(m.model);
      });

  nb::class_<Session>(m, "Session", "A model on a device.")
      .def(nb::init<std::shared_ptr<Model>, const std::string &, int,
                    uint64_t>(),
           nb::arg("model"), nb::arg("device") = "cpu", nb::arg("threads") = 0,
           nb::arg("max_memory") = 0)
      .def("set_input", &Session::setInput, nb::arg("name"), nb::arg("array"))
      .def("set_input_device", &Session::setInputDevice, nb::arg("name"),
           nb::arg("array"))
      .def("bind_output_device", &Session::bindOutputDevice, nb::arg("index"),
           nb::arg("array").none())
      .def("run", &Session::run)
      .def("run_profiled", &Session::runProfiled)
      .def("output", &Session::output, nb::arg("index"))
      .def_prop_ro("threads", &Session::threads);
}
