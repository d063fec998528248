import CountdownDomain

/// One stream's part of a start fan-out, as the planning transaction (`StartClaims.planStarts`) leaves it.
public struct StartPlan: Sendable {
    public var stream: StreamSnapshotRow
    /// Every device considered, as its ledger row is recorded (its token hash goes with its push's outcome too).
    public var targets: [StartLedger.Key: StartLedger.Target] = [:]
    /// The rows this worker claimed for the page being sent.
    public var claimed: [StartLedger.Claim] = []
    public var openByOthers = 0
    /// Every row of the stream was written by this fan-out and claimed in its first page: once their outcomes are
    /// written, only a retry outcome can leave one open.
    public var claimedEveryRow = false

    public init(stream: StreamSnapshotRow) {
        self.stream = stream
    }

    /// The claimed rows of `plans`, as the settler holds them.
    public static func claimedRows(_ plans: [String: StartPlan]) -> [StartLedger.Key] {
        plans.values.flatMap { plan in plan.claimed.map(\.key) }
    }
}
