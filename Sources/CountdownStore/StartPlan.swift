import CountdownDomain

/// One stream's part of a start fan-out, as the planning transaction (`StartFanoutStore.planStarts`) leaves it.
public struct StartPlan: Sendable {
    /// A target's user and device within its stream.
    public struct TargetKey: Hashable, Sendable {
        public var user: String
        public var device: String

        public init(_ user: String, _ device: String) {
            self.user = user
            self.device = device
        }
    }

    public var stream: StreamSnapshotRow
    /// Every device considered, as its ledger row is recorded (its token hash goes with its push's outcome too).
    public var targets: [TargetKey: StartLedgerStore.Target] = [:]
    public var claimed: [(user: String, device: String)] = []
    public var openByOthers = 0
    /// Every row of the stream was written by this fan-out and claimed in its first page: once their outcomes are
    /// written, only a retry outcome can leave one open.
    public var claimedEveryRow = false

    public init(stream: StreamSnapshotRow) {
        self.stream = stream
    }

    /// The claimed rows of `plans`, as the settler holds them.
    public static func claimedRows(_ plans: [String: StartPlan]) -> [ClaimStore.Row] {
        plans.flatMap { streamID, plan in plan.claimed.map { ClaimStore.Row(stream: streamID, user: $0.user, device: $0.device) } }
    }
}
