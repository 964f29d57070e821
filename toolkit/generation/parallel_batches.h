// Batches translated at once, each worker on its share of the intra-op threads.
//
// Why: a decoding step is a chain of small ops (one row of GEMMs per layer, a few
// vocabulary passes, beam bookkeeping). With every thread on one batch, the second
// thread idles in each op's serial part and at each barrier. Two batches on one thread
// each keep both cores busy instead (measured in docs/csan-generate.md, "Parallel
// batches"). Results do not depend on the worker count: each batch's search
// is deterministic given its inputs (and its seed, see SequenceGenerator::reseed).
#pragma once

#include <cstdint>
#include <functional>

namespace csan::generation {

// How many workers translate `batches` batches: `requested`, or with 0 one per
// intra-op thread; never more than there are batches, never less than 1.
int64_t resolve_parallel_batches(int64_t requested, int64_t batches);

// Calls work(worker, batch) once for every batch in [0, batches): worker 0 on the calling
// thread, the others on threads of their own, each taking the next batch not yet taken.
// While it runs, every worker has max(1, threads / workers) intra-op threads; the
// caller's count is restored afterwards. The caller's thread-local state (grad mode,
// profiler) holds in every worker. The first exception stops the others taking new
// batches and is rethrown here once all have stopped.
void for_each_batch_in_parallel(int64_t batches, int64_t workers,
                                const std::function<void(int64_t worker, int64_t batch)>& work);

}  // namespace csan::generation
