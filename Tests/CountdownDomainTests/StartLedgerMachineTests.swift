import CountdownDomain
import Testing

/// The start ledger's transitions, without a database (`LedgerMachineConformanceTests` holds the SQL to them).
@Suite struct StartLedgerMachineTests {
    typealias Machine = StartLedgerMachine
    static let now = 1_000.0

    static func sending(_ owner: String?, until: Double, attempts: Int = 1) -> Machine.Row {
        Machine.Row(status: .sending, tokenHash: "h", claimedBy: owner, claimedUntil: until, attempts: attempts)
    }

    @Test func aNewEligibleDeviceIsClaimedOnTheSpotOrLeftPending() {
        let claimed = Machine.apply(.recorded(skip: nil, tokenHash: "h", claimFor: ("w1", 1030), now: Self.now), to: nil)
        #expect(claimed.action == .push)
        #expect(claimed.row == Self.sending("w1", until: 1030))
        let pending = Machine.apply(.recorded(skip: nil, tokenHash: "h", claimFor: nil, now: Self.now), to: nil)
        #expect(pending.action == .write)
        #expect(pending.row == Machine.Row(status: .pending, tokenHash: "h"))
        let skipped = Machine.apply(.recorded(skip: .notIOS, tokenHash: "h", claimFor: ("w1", 1030), now: Self.now), to: nil)
        #expect(skipped.action == .write, "a skipped device is never claimed")
        #expect(skipped.row == Machine.Row(status: .skipped, reason: "not_ios", tokenHash: "h"))
    }

    @Test func aRowSentOrInFlightIsNeverRecordedAgain() {
        for status in [Machine.Status.sent, .sending, .pending] {
            let row = Machine.Row(status: status, tokenHash: "old", claimedBy: "w1", claimedUntil: 900, attempts: 1)
            let again = Machine.apply(.recorded(skip: nil, tokenHash: "new", claimFor: ("w2", 1030), now: Self.now), to: row)
            #expect(again.action == .none, "\(status)")
            #expect(again.row == row)
        }
    }

    @Test func aSkipReopensWhenItsReasonOrTokensChangeAndADeadTokenOnlyForNewTokens() {
        let skipped = Machine.Row(status: .skipped, reason: "no_fcm_token", tokenHash: "h1")
        #expect(!Machine.reopens(skipped, skip: .noFCMToken, tokenHash: "h1"), "nothing changed")
        #expect(Machine.reopens(skipped, skip: .noFCMToken, tokenHash: "h2"))
        #expect(Machine.reopens(skipped, skip: .preferenceOff, tokenHash: "h1"))
        let reopened = Machine.apply(.recorded(skip: nil, tokenHash: "h1", claimFor: ("w1", 1030), now: Self.now), to: skipped)
        #expect(reopened.action == .push)
        #expect(reopened.row == Machine.Row(status: .sending, tokenHash: "h1", claimedBy: "w1", claimedUntil: 1030, attempts: 1))

        let dead = Machine.Row(status: .failed, reason: "dead_token:Unregistered", tokenHash: "h1", claimedBy: "w1", attempts: 1)
        #expect(!Machine.reopens(dead, skip: nil, tokenHash: "h1"), "the same dead tokens")
        #expect(!Machine.reopens(dead, skip: .noFCMToken, tokenHash: "h2"), "new tokens but not eligible")
        #expect(Machine.reopens(dead, skip: nil, tokenHash: "h2"))
        #expect(Machine.apply(.recorded(skip: nil, tokenHash: "h2", claimFor: ("w2", 1030), now: Self.now), to: dead).row
                == Machine.Row(status: .sending, tokenHash: "h2", claimedBy: "w2", claimedUntil: 1030, attempts: 2))
        let rejected = Machine.Row(status: .failed, reason: "rejected:400", tokenHash: "h1")
        #expect(!Machine.reopens(rejected, skip: nil, tokenHash: "h2"), "only a dead token reopens a failure")
    }

    @Test func aClaimTakesPendingRowsAndRowsOfDeadOrSilentOwnersOnly() {
        let pending = Machine.Row(status: .pending, tokenHash: "h")
        #expect(Machine.apply(.claimRequested(owner: "w2", until: 1030, owners: .init(), now: Self.now), to: pending)
                == (Self.sending("w2", until: 1030), .push))

        let live = Self.sending("w1", until: 1010)
        #expect(Machine.apply(.claimRequested(owner: "w2", until: 1030, owners: .init(), now: Self.now), to: live).action == .none,
                "an unexpired claim is kept")
        #expect(Machine.apply(.claimRequested(owner: "w2", until: 1030, owners: .init(dead: ["w1"]), now: Self.now), to: live)
                == (Self.sending("w2", until: 1030, attempts: 2), .push), "a dead owner's claim is taken over at once")

        let expired = Self.sending("w1", until: 990)
        #expect(Machine.apply(.claimRequested(owner: "w2", until: 1030, owners: .init(alive: ["w1"]), now: Self.now), to: expired).action == .none,
                "a living owner keeps an expired claim (it may be pushing while PostgreSQL was away)")
        #expect(Machine.apply(.claimRequested(owner: "w2", until: 1030, owners: .init(), now: Self.now), to: expired).action == .push,
                "an owner the fleet does not know loses an expired claim")

        for status in [Machine.Status.sent, .failed, .skipped] {
            #expect(!Machine.claimable(Machine.Row(status: status), owners: .init(), now: Self.now))
        }
    }

    @Test func onlyTheOwnerExtendsOrGivesBackItsClaimAndOnlyAnExpiredOneIsGivenBack() {
        let row = Self.sending("w1", until: 1010)
        #expect(Machine.apply(.extended(owner: "w2", until: 1060), to: row).action == .none)
        #expect(Machine.apply(.extended(owner: "w1", until: 1060), to: row).row?.claimedUntil == 1060)
        #expect(Machine.apply(.released(owner: "w1", now: Self.now), to: row).action == .none, "not expired yet")
        #expect(Machine.apply(.released(owner: "w2", now: 1020), to: row).action == .none, "not its claim")
        #expect(Machine.apply(.released(owner: "w1", now: 1020), to: row) == (Machine.Row(status: .pending, tokenHash: "h", attempts: 1), .write))
    }

    @Test func anOutcomeEndsTheClaimAndKeepsTheTokensItWasNotGiven() {
        let settled = Machine.apply(.settled(status: .sent, reason: nil, tokenHash: nil, owner: "w1", generation: 1), to: Self.sending("w1", until: 1030))
        #expect(settled == (Machine.Row(status: .sent, tokenHash: "h", claimedBy: "w1", attempts: 1), .write))
        #expect(Machine.apply(.settled(status: .sent, reason: nil, tokenHash: "h", owner: "w1", generation: 1), to: nil) == (nil, .none))
    }

    /// An outcome lands only on the claim it answers: not on a row another sender took over (its sender was
    /// declared dead), not on the next generation of the row, not on a row no longer being sent.
    @Test func aLateOutcomeLandsOnlyOnTheClaimItAnswers() {
        let takenOver = Self.sending("w2", until: 1030, attempts: 2)
        #expect(Machine.apply(.settled(status: .failed, reason: "rejected:400", tokenHash: nil, owner: "w1", generation: 1), to: takenOver)
                == (takenOver, .none))
        var nextGeneration = Self.sending("w1", until: 1030)
        nextGeneration.generation = 2
        #expect(Machine.apply(.settled(status: .sent, reason: nil, tokenHash: nil, owner: "w1", generation: 1), to: nextGeneration)
                == (nextGeneration, .none))
        let sent = Machine.Row(status: .sent, tokenHash: "h", claimedBy: "w1", attempts: 1)
        #expect(Machine.apply(.settled(status: .pending, reason: "retry:timeout", tokenHash: nil, owner: "w1", generation: 1), to: sent)
                == (sent, .none))
        #expect(Machine.apply(.settled(status: .assumedSent, reason: nil, tokenHash: nil, owner: "w1", generation: 1),
                              to: Self.sending("w1", until: 1030)).action == .none, "the table has no outcome `assumed_sent`")
    }

    /// The restore guard records rows as sent without a push: new rows and any row not sent; a sent row stays, and
    /// a restored row is never claimed or reopened.
    @Test func aRestoredRowIsAssumedSentAndNeverPushed() {
        #expect(Machine.apply(.restored, to: nil) == (Machine.Row(status: .assumedSent, reason: "restored"), .write))
        let pending = Machine.Row(status: .pending, tokenHash: "h", attempts: 1)
        let restored = Machine.Row(status: .assumedSent, reason: "restored", tokenHash: "h", attempts: 1)
        #expect(Machine.apply(.restored, to: pending) == (restored, .write))
        let sent = Machine.Row(status: .sent, tokenHash: "h", attempts: 1)
        #expect(Machine.apply(.restored, to: sent) == (sent, .none))
        #expect(Machine.apply(.claimRequested(owner: "w1", until: 1030, owners: .init(dead: ["w1"]), now: Self.now), to: restored).action == .none)
        #expect(Machine.apply(.recorded(skip: nil, tokenHash: "h2", claimFor: ("w1", 1030), now: Self.now), to: restored).action == .none)
        #expect(Machine.apply(.outlived(android: false), to: restored).action == .none)
    }

    /// Every change `apply` makes over a grid of rows and events is one the table allows: the table the store's
    /// statements read is the machine's.
    @Test func everyTransitionIsInTheTable() {
        let events: [Machine.Event] = [
            .recorded(skip: nil, tokenHash: "h2", claimFor: ("w1", 1030), now: Self.now), .recorded(skip: .noFCMToken, tokenHash: "h2", claimFor: nil, now: Self.now),
            .claimRequested(owner: "w2", until: 1030, owners: .init(dead: ["w1"]), now: Self.now), .extended(owner: "w1", until: 1060),
            .released(owner: "w1", now: 2000), .settled(status: .sent, reason: nil, tokenHash: nil, owner: "w1", generation: 1),
            .settled(status: .pending, reason: "retry:x", tokenHash: nil, owner: "w1", generation: 1), .outlived(android: false), .restored,
        ]
        let rows: [Machine.Row?] = [nil] + Machine.Status.allCases.map {
            Machine.Row(status: $0, reason: "dead_token:x", tokenHash: "h", claimedBy: "w1", claimedUntil: 1010, attempts: 1)
        }
        var changed = 0
        for row in rows {
            for event in events {
                let (next, action) = Machine.apply(event, to: row)
                guard action != .none, let next else { continue }
                changed += 1
                #expect(Machine.rule(for: Machine.change(of: event, to: row)).allows(from: row?.status, to: next.status), "\(event) on \(String(describing: row))")
            }
        }
        #expect(changed > 10)
    }

    /// One start per device and stream: over random histories with three senders, every push comes from a claim
    /// of a pending row or a takeover of a dead or silent owner, and a sent row is never pushed again.
    @Test func aSentRowIsNeverPushedAgainWhateverHappens() {
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            var row: Machine.Row?
            var now = Self.now
            var sent = false
            for _ in 0..<60 {
                now += Double.random(in: 0...20, using: &random)
                let owner = ["w1", "w2", "w3"].randomElement(using: &random)!
                let event: Machine.Event = switch Int.random(in: 0..<5, using: &random) {
                case 0: .recorded(skip: Bool.random(using: &random) ? nil : .noFCMToken, tokenHash: ["a", "b"].randomElement(using: &random)!,
                                  claimFor: (owner, now + 30), now: now)
                case 1: .claimRequested(owner: owner, until: now + 30, owners: .init(dead: Bool.random(using: &random) ? ["w1"] : []), now: now)
                case 2: .extended(owner: owner, until: now + 30)
                case 3: .released(owner: owner, now: now)
                default: .settled(status: [.sent, .failed].randomElement(using: &random)!, reason: "dead_token:x", tokenHash: nil,
                                  owner: owner, generation: 1)
                }
                let before = row
                let (next, action) = Machine.apply(event, to: row)
                if action == .push {
                    #expect(!sent || before?.status != .sent, "pushed a sent row: \(String(describing: before)) on \(event)")
                    #expect(next?.status == .sending && next?.claimedBy == owner)
                }
                if next?.status == .sent { sent = true }
                row = next
            }
        }
    }

    /// A long reschedule: a sent row whose activity will have ended before the stream starts opens again as the
    /// next generation, pending, for a new push-to-start; any other row, and an Android countdown, stays.
    @Test func anOutlivedStartOpensTheNextGenerationOnlyForSentIOSRows() {
        let sent = Machine.Row(status: .sent, tokenHash: "a", attempts: 1)
        let (reopened, action) = Machine.apply(.outlived(android: false), to: sent)
        #expect(action == .write)
        #expect(reopened == Machine.Row(status: .pending, tokenHash: "a", attempts: 1, generation: 2))
        #expect(Machine.apply(.outlived(android: true), to: sent) == (sent, .none))
        for status in [Machine.Status.pending, .sending, .failed, .skipped] {
            let row = Machine.Row(status: status, reason: "x", claimedBy: "w1", claimedUntil: Self.now)
            #expect(Machine.apply(.outlived(android: false), to: row) == (row, .none))
        }
        #expect(Machine.apply(.outlived(android: false), to: nil) == (nil, .none))
        // The next generation is claimed and pushed as a new row would be, and keeps its generation.
        let (claimed, push) = Machine.apply(.claimRequested(owner: "w1", until: Self.now + 30, owners: .init(), now: Self.now), to: reopened)
        #expect(push == .push && claimed?.generation == 2 && claimed?.attempts == 2)
    }
}
