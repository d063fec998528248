import CountdownFlows

/// No fleet: claims are anonymous and expire by time.
struct AnonymousWorker: WorkerLiveness {
    var workerID: String? { nil }
    func classify(_ owners: [String]) async -> (dead: [String], alive: [String]) { ([], []) }
}
