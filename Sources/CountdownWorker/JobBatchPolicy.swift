import DelayQueue

/// Which claimed jobs run together: jobs of a batchable kind are grouped, up to `size` per group, in claim order;
/// every other job runs alone. The start fan-out batches its T-60 jobs this way (`START_BATCH_SIZE`).
struct JobBatchPolicy: Sendable, Equatable {
    var kinds: Set<String>
    /// Jobs per group at most; 1 or less: no batching.
    var size: Int

    /// No batching: every job alone.
    static let none = JobBatchPolicy(kinds: [], size: 1)

    /// Groups `jobs`: singles first, in claim order, then the batches of each kind.
    func group(_ jobs: [ClaimedJob]) -> [[ClaimedJob]] {
        var singles: [[ClaimedJob]] = []
        var byKind: [String: [ClaimedJob]] = [:]
        var kindOrder: [String] = []
        for job in jobs {
            guard kinds.contains(job.kind), size > 1 else {
                singles.append([job])
                continue
            }
            if byKind[job.kind] == nil { kindOrder.append(job.kind) }
            byKind[job.kind, default: []].append(job)
        }
        var groups = singles
        for kind in kindOrder {
            let batch = byKind[kind] ?? []
            for offset in stride(from: 0, to: batch.count, by: size) {
                groups.append(Array(batch[offset..<min(offset + size, batch.count)]))
            }
        }
        return groups
    }
}
