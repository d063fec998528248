import CountdownDomain
import CountdownStore
import Postgres
import Testing
import TestSupport

/// The start ledger's SQL (`StartLedger`) and its pure machine (`StartLedgerMachine`) agree: seeded
/// random event sequences on one row, each event run through the store in a transaction (whose `now()` the machine is
/// given) and through the machine, compare the row and the action after every event.
@Suite struct LedgerMachineConformanceTests {
    static let owners = ["w1", "w2", "w3"]

    /// One event with the store call that performs it; `seconds` is the claim length the SQL adds to `now()`.
    enum Step: CustomStringConvertible {
        case record(skip: StartSkipReason?, fcm: String, pts: String, claimer: String?, seconds: Int, racing: Bool)
        case claim(owner: String, seconds: Int, dead: Set<String>, alive: Set<String>)
        case extend(owner: String, seconds: Int)
        case release(owner: String)
        /// An outcome from `owner` for the row's current generation less `generationsBack`.
        case settle(status: StartLedgerMachine.Status, reason: String?, tokens: (String, String)?, owner: String, generationsBack: Int)
        /// The stream moves 10 hours later; rows sent before then outlive an 8-hour activity.
        case outlive
        /// The restore guard records the row as sent.
        case restore

        var description: String {
            switch self {
            case .record(let skip, let fcm, let pts, let claimer, let seconds, let racing):
                "record(\(skip?.rawValue ?? "eligible"), \(fcm)/\(pts), claim by \(claimer ?? "-") for \(seconds)s\(racing ? ", racing" : ""))"
            case .claim(let owner, let seconds, let dead, let alive):
                "claim(\(owner) for \(seconds)s, dead \(dead.sorted()), alive \(alive.sorted()))"
            case .extend(let owner, let seconds): "extend(\(owner) for \(seconds)s)"
            case .release(let owner): "release(\(owner))"
            case .settle(let status, let reason, let tokens, let owner, let back):
                "settle(\(status) \(reason ?? "-") \(tokens.map { "\($0.0)/\($0.1)" } ?? "-") from \(owner), generation -\(back))"
            case .outlive: "outlive"
            case .restore: "restore"
            }
        }

        static func random(using random: inout SeededGenerator) -> Step {
            let owner = owners.randomElement(using: &random)!
            // Negative lengths make claims that have already run out, so takeovers and releases happen.
            let seconds = [-30, -1, 30, 600].randomElement(using: &random)!
            func subset() -> Set<String> { Set(owners.filter { _ in Bool.random(using: &random) }) }
            switch Int.random(in: 0..<11, using: &random) {
            case 0...2:
                let skip: StartSkipReason? = [nil, nil, .noFCMToken, .preferenceOff].randomElement(using: &random)!
                return .record(skip: skip, fcm: ["f1", "f2"].randomElement(using: &random)!, pts: ["p1", "p2"].randomElement(using: &random)!,
                               claimer: Bool.random(using: &random) ? owner : nil, seconds: seconds, racing: Bool.random(using: &random))
            case 3...5:
                let dead = subset()
                return .claim(owner: owner, seconds: seconds, dead: dead, alive: subset().subtracting(dead))
            case 6: return .extend(owner: owner, seconds: seconds)
            case 7: return .release(owner: owner)
            case 8: return .outlive
            default:
                // `assumed_sent` is no outcome the table allows: both refuse it.
                let outcome: (StartLedgerMachine.Status, String?) = [
                    (.sent, nil), (.failed, "dead_token:BadDeviceToken"), (.failed, "rejected:400"), (.skipped, "no_longer_eligible"),
                    (.pending, "retry:timeout"), (.assumedSent, nil),
                ].randomElement(using: &random)!
                let tokens = Bool.random(using: &random) ? (["f1", "f2"].randomElement(using: &random)!, "p1") : nil
                return .settle(status: outcome.0, reason: outcome.1, tokens: tokens, owner: owner, generationsBack: [0, 0, 0, 1].randomElement(using: &random)!)
            }
        }

        /// The machine's event, at the transaction's `now`, for a row of `generation` (1 when there is none).
        func event(now: Double, generation: Int) -> StartLedgerMachine.Event {
            switch self {
            case .record(let skip, let fcm, let pts, let claimer, let seconds, _):
                // A fan-out claims on the spot only the eligible rows it writes (`claim.limit` of them).
                .recorded(skip: skip, tokenHash: TokenHash.of(fcm: fcm, pts: pts),
                          claimFor: claimer == nil ? nil : (claimer, now + Double(seconds)), now: now)
            case .claim(let owner, let seconds, let dead, let alive):
                .claimRequested(owner: owner, until: now + Double(seconds), owners: .init(dead: dead, alive: alive), now: now)
            case .extend(let owner, let seconds): .extended(owner: owner, until: now + Double(seconds))
            case .release(let owner): .released(owner: owner, now: now)
            case .settle(let status, let reason, let tokens, let owner, let back):
                .settled(status: status, reason: reason, tokenHash: tokens.map { TokenHash.of(fcm: $0.0, pts: $0.1) }, owner: owner,
                         generation: generation - back)
            case .outlive: .outlived(android: false)
            case .restore: .restored
            }
        }

        /// Runs the store's statement on the row of `generation`; returns whether it handed the row to a sender to push.
        func perform(on connection: PostgresConnection, generation: Int) throws -> Bool {
            let row = StartLedger.Key(stream: "s", user: "u", device: "d")
            switch self {
            case .record(let skip, let fcm, let pts, let claimer, let seconds, let racing):
                let candidate = DeviceCandidate(userID: "u", role: "guest", deviceID: "d", platform: "ios", fcmToken: fcm,
                                                pushToStartToken: pts, locale: nil, liveStreamEnabled: true)
                let recorded = try StartLedger.recordTargets(
                    [.init(stream: "s", candidate: candidate, skip: skip)],
                    claim: .init(owner: claimer, seconds: seconds, limit: claimer == nil ? 0 : 1), racing: racing, on: connection)
                return !recorded.claimed.isEmpty
            case .claim(let owner, let seconds, let dead, let alive):
                let claimed = try StartLedger.claim(["s"], scope: .stream, seconds: seconds, owner: owner,
                                                         owners: (dead.sorted(), alive.sorted()), on: connection)
                return !claimed.isEmpty
            case .extend(let owner, let seconds):
                _ = try StartLedger.keepClaims(owner: owner, held: [row], seconds: seconds, on: connection)
            case .release(let owner):
                _ = try StartLedger.keepClaims(owner: owner, held: [], releasing: [row], seconds: 0, on: connection)
            case .settle(let status, let reason, let tokens, let owner, let back):
                let settlement = StartLedger.Settlement(.init(row, generation: generation - back), owner: owner, status: status, reason: reason,
                                                        tokenHash: tokens.map { TokenHash.of(fcm: $0.0, pts: $0.1) })
                _ = try StartLedger.settle([settlement], on: connection)
            case .outlive:
                _ = try connection.execute("UPDATE streams SET planned_start_at = now() + interval '10 hours' WHERE id = 's'")
                try StartLedger.reopenOutlived(["s"], lifetimeSeconds: 8 * 3600, on: connection)
            case .restore:
                try StartLedger.assumeSent([row], on: connection)
            }
            return false
        }
    }

    static func stored(on connection: PostgresConnection) throws -> StartLedgerMachine.Row? {
        guard let row = try connection.query("""
            SELECT status, reason, token_hash, claimed_by, extract(epoch FROM claimed_until)::float8 AS until, attempts, generation
            FROM countdown_start_ledger
            """).first else { return nil }
        return StartLedgerMachine.Row(status: StartLedgerMachine.Status(rawValue: try row.decode("status"))!, reason: try row.decode("reason"),
                                      tokenHash: try row.decode("token_hash"), claimedBy: try row.decode("claimed_by"),
                                      claimedUntil: try row.decode("until"), attempts: try row.decode("attempts"),
                                      generation: try row.decode("generation"))
    }

    /// Equal but for claim ends computed on both sides from the same `now` (a microsecond apart at most).
    static func agree(_ machine: StartLedgerMachine.Row?, _ stored: StartLedgerMachine.Row?) -> Bool {
        guard var machine, let stored else { return machine == nil && stored == nil }
        if let a = machine.claimedUntil, let b = stored.claimedUntil, abs(a - b) < 0.001 { machine.claimedUntil = b }
        return machine == stored
    }

    @Test(arguments: [UInt64(1), 2, 3, 4, 5, 6, 7, 8])
    func theStatementsMakeTheMachinesTransitions(seed: UInt64) async throws {
        try await StoreDatabase.with(prefix: "ledger_machine_\(seed)") { client in
            try await client.seed("INSERT INTO streams (id, title, planned_start_at) VALUES ('s', 'S', now() + interval '1 hour');")
            var random = SeededGenerator(seed: seed)
            var expected: StartLedgerMachine.Row?
            var history: [String] = []
            var pushes = 0
            for index in 0..<60 {
                // Even seeds restore the row late in the history: nothing after it may push or reopen it.
                let step = index == 45 && seed % 2 == 0 ? .restore : Step.random(using: &random)
                history.append(step.description)
                let (action, stored, now, generation) = try await client.transaction { connection in
                    let now = try connection.query("SELECT extract(epoch FROM now())::float8 AS now").first!.decode("now", as: Double.self)
                    let before = try Self.stored(on: connection)
                    let generation = before?.generation ?? 1
                    let pushed = try step.perform(on: connection, generation: generation)
                    let after = try Self.stored(on: connection)
                    let action: StartLedgerMachine.Action = pushed ? .push : Self.agree(before, after) ? .none : .write
                    return (action, after, now, generation)
                }
                let (next, machineAction) = StartLedgerMachine.apply(step.event(now: now, generation: generation), to: expected)
                #expect(action == machineAction, "seed \(seed): \(history.joined(separator: " → "))")
                #expect(Self.agree(next, stored), "seed \(seed): machine \(String(describing: next)), stored \(String(describing: stored)) after \(history.joined(separator: " → "))")
                guard action == machineAction, Self.agree(next, stored) else { return }
                expected = stored
                if action == .push { pushes += 1 }
            }
            #expect(pushes > 0, "seed \(seed) exercised no push: \(history.joined(separator: " → "))")
        }
    }
}
