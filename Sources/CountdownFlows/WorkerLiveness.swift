/// Who this worker is and which other workers are alive: the seam between the flows and the fleet's heartbeats.
public protocol WorkerLiveness: Sendable {
    /// This worker's id, recorded with every claim it takes (nil: claims are anonymous and expire by time only).
    var workerID: String? { get }
    /// Sorts `owners` (other workers' ids) into dead (their heartbeat is gone: their claims are taken over at once)
    /// and alive (their claims are kept even once expired). An owner in neither keeps its claim until it expires;
    /// when liveness cannot be read, every owner counts as alive.
    func classify(_ owners: [String]) async -> (dead: [String], alive: [String])
}
