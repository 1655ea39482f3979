//===- Passes.h - every kiln pass -------------------------------*- C++ -*-===//
#ifndef KILN_PASSES_PASSES_H
#define KILN_PASSES_PASSES_H

#include "kiln/Dialect/KilnDialect.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace kiln {

// Each generated file #undefs the macro it reads.
#define GEN_PASS_DECL
#include "kiln/Passes/FusionPasses.h.inc"
#define GEN_PASS_DECL
#include "kiln/Passes/LoweringPasses.h.inc"
#define GEN_PASS_DECL
#include "kiln/Passes/CodegenPasses.h.inc"

#define GEN_PASS_REGISTRATION
#include "kiln/Passes/FusionPasses.h.inc"
#define GEN_PASS_REGISTRATION
#include "kiln/Passes/LoweringPasses.h.inc"
#define GEN_PASS_REGISTRATION
#include "kiln/Passes/CodegenPasses.h.inc"

inline void registerKilnPasses() {
  registerFusionPasses();
  registerLoweringPasses();
  registerCodegenPasses();
}

} // namespace kiln

#endif
