extension DelayQueue {
    /// Whether a job whose id starts with `prefix` is waiting or leased (dead letters do not count).
    public func hasLiveJobs(prefix: String) async throws -> Bool {
        let ids = try await jobIDs(prefix: prefix, kind: nil)
        guard !ids.isEmpty else { return false }
        return try await jobs(ids: ids).values.contains { info in
            if case .dead = info.state { return false }
            return true
        }
    }
}
