//===- BatchPieces.h - a dynamic batch as pieces of compiled chunks -*- C++
//-*-===//
//
// A dynamic-batch artifact holds kernels for one or more chunks of the
// batch (kiln-compile --dynamic-batch --batch-chunks). A run takes its batch
// as pieces, each run by the kernels of one chunk, a piece of fewer elements
// than its chunk filled up with copies of its last element.
//
//===----------------------------------------------------------------------===//
#ifndef KILN_RUNTIME_BATCHPIECES_H
#define KILN_RUNTIME_BATCHPIECES_H

#include <cstdint>
#include <vector>

namespace kiln {

/// The chunk of each piece that covers `batch` (at least 1) elements, given
/// the distinct chunks (each at least 1) the artifact has, largest pieces
/// first. Each piece costs its chunk's elements, padding included, plus a
/// fixed cost counted as the smallest chunk's elements (a run's launches and
/// copies); the pieces minimize the sum.
std::vector<int64_t> batchPieces(int64_t batch,
                                 const std::vector<int64_t> &chunks);

} // namespace kiln

#endif // KILN_RUNTIME_BATCHPIECES_H
