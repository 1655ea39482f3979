//===- MakeTestArtifact.cpp - Files for the kiln-run/kiln-bench tests -----===//
//
// Writes DIR/model.kiln (y = (x + 1) * w, see TestArtifact.h) with inputs and
// expected outputs in both tensor formats, and GPU versions of the model, for
// the tool tests in ctest.
//
//===----------------------------------------------------------------------===//
#include "TestArtifact.h"
#include "common/TensorFile.h"

#include <cstdio>

using namespace kiln_test;

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  std::string dir = argv[1];
  std::vector<uint8_t> model = ArtifactSpec().build();
  std::ofstream(dir + "/model.kiln", std::ios::binary)
      .write(reinterpret_cast<const char *>(model.data()),
             std::streamsize(model.size()));
  // The same model for a GPU, with a stand-in PTX image: the same bytes on
  // every machine (the CPU kernel object embeds build paths), which keeps
  // scripts/fuzz.sh's fixed-seed runs identical everywhere.
  ArtifactSpec gpu;
  gpu.target = "cuda:sm_90";
  gpu.kernelObject.clear();
  std::string ptx = ".version 8.0\n.target sm_90\n.address_size 64\n";
  gpu.gpuImages.push_back({"sm_90", "ptx", {ptx.begin(), ptx.end()}});
  std::vector<uint8_t> gpuModel = gpu.build();
  std::ofstream(dir + "/model-gpu.kiln", std::ios::binary)
      .write(reinterpret_cast<const char *>(gpuModel.data()),
             std::streamsize(gpuModel.size()));

  // For kiln-bench on the fake driver (FakeCudaDriver.cpp): a PTX image
  // that declares both kernels, the second launched with 64 KiB of dynamic
  // shared memory.
  ArtifactSpec fake = gpu;
  std::string fakePtx = ptx + ".visible .entry add_one(\n)\n{ ret; }\n"
                              ".visible .entry scale(\n)\n{ ret; }\n";
  fake.gpuImages[0].data.assign(fakePtx.begin(), fakePtx.end());
  fake.dispatches[1].dynamicWorkgroupMemory = 64 * 1024;
  std::vector<uint8_t> fakeModel = fake.build();
  std::ofstream(dir + "/model-fake-cuda.kiln", std::ios::binary)
      .write(reinterpret_cast<const char *>(fakeModel.data()),
             std::streamsize(fakeModel.size()));

  kiln::Tensor x{"x", KILN_DTYPE_F32, {N}, std::vector<uint8_t>(kTensorBytes)};
  kiln::Tensor y = x, wrong = x;
  y.name = wrong.name = "y";
  for (int64_t i = 0; i < N; ++i) {
    x.set(i, double(i) / 8 - 3);
    y.set(i, (float(x.at(i)) + 1.0f) * (float(i) * 0.5f));
    wrong.set(i, y.at(i) + (i == 77 ? 1.0 : 0.0));
  }
  std::string error;
  bool ok = kiln::writeNpy(dir + "/x.npy", x, error) &&
            kiln::writeTensorProto(dir + "/x.pb", x, error) &&
            kiln::writeTensorProto(dir + "/y.pb", y, error) &&
            kiln::writeNpy(dir + "/y_wrong.npy", wrong, error);
  if (!ok)
    std::fprintf(stderr, "%s\n", error.c_str());
  return ok ? 0 : 1;
}
