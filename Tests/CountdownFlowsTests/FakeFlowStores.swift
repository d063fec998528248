import BlockingIO
import CountdownDomain
import CountdownFlows
import CountdownStore
import Foundation

/// The flows' store seams without a database: `planStarts`, `ledgerOwners` and `expire` answer as the test sets
/// them (every call recorded); any other call fails the run with `Unexpected`.
final class FakeFlowStores: FlowStores, StartOutcomeSettling {
    struct Unexpected: Error { var call: String }

    /// One `planStarts` call as the fake saw it.
    struct PlanCall: Sendable {
        var streams: [String]
        var racing: Bool
        var withoutRows: Set<String>
    }

    let planCalls = Locked([PlanCall]())
    /// What each `planStarts` call does, by its index (past the end: nothing decided, nothing planned).
    let planAnswers: Locked<[@Sendable (@Sendable ([StartLedger.Key]) -> Void) throws -> [String: HandlerOutcome]]>
    let streamsWithRows: Set<String>
    let expiry: StreamQueries.Expiry

    init(streamsWithRows: Set<String> = [], expiry: StreamQueries.Expiry = .missing,
         planAnswers: [@Sendable (@Sendable ([StartLedger.Key]) -> Void) throws -> [String: HandlerOutcome]] = []) {
        self.streamsWithRows = streamsWithRows
        self.expiry = expiry
        self.planAnswers = Locked(planAnswers)
    }

    func ledgerOwners(_ streams: [String], except: String?) async throws -> (owners: [String], streamsWithRows: Set<String>) {
        ([], streamsWithRows)
    }

    func planStarts(_ streams: [String], scope: FanoutScope, claim: StartLedger.InsertClaim, owners: (dead: [String], alive: [String]),
                    withoutRows: Set<String>, racing: Bool, decide: @escaping @Sendable (StreamSnapshotRow) -> HandlerOutcome?,
                    skip: @escaping @Sendable (DeviceCandidate) -> StartSkipReason?,
                    noteClaims: @escaping @Sendable ([StartLedger.Key]) -> Void) async throws
        -> (decided: [String: HandlerOutcome], plans: [String: StartPlan]) {
        let index = planCalls.withLock { calls in
            calls.append(PlanCall(streams: streams, racing: racing, withoutRows: withoutRows))
            return calls.count - 1
        }
        let answers = planAnswers.value
        return (index < answers.count ? try answers[index](noteClaims) : [:], [:])
    }

    func expire(_ stream: String, expireAfter: Int, tolerance: Double) async throws -> StreamQueries.Expiry { expiry }

    func claimStarts(_ streams: [String], scope: FanoutScope, seconds: Int, owner: String?, owners: (dead: [String], alive: [String]),
                     limit: Int, noteClaims: @escaping @Sendable ([StartLedger.Key]) -> Void) async throws -> [StartLedger.Claim] {
        throw Unexpected(call: "claimStarts")
    }
    func markStartsDone(_ planned: [String: Date], asking unknown: [String]) async throws -> Set<String> { throw Unexpected(call: "markStartsDone") }
    func settle(_ settlements: [StartLedger.Settlement], refused: [DeviceTokenQueries.Invalidation]) async throws -> [StartLedger.Refused] {
        throw Unexpected(call: "settle")
    }
    func streamsInStartWindow(of member: StreamQueries.Member, lead: Int) async throws -> [String] { throw Unexpected(call: "streamsInStartWindow") }

    func endClaimOwners(_ stream: String, except: String?) async throws -> [String] { throw Unexpected(call: "endClaimOwners") }
    func sessions(of stream: String, device: String?, claimingFor seconds: Int, owner: String?, deadOwners: [String]) async throws
        -> (stream: StreamSnapshotRow, othersClaimed: Int, heldFor: Double?, sessions: [Session])? { throw Unexpected(call: "sessions") }
    func endsAccepted(_ accepted: [Session], stream: String) async throws -> Int { throw Unexpected(call: "endsAccepted") }
    func settleEnds(_ stream: String, refused: [DeviceTokenQueries.Invalidation], finished: [Session], done: [Session],
                    failed: [EndDeliveryQueries.Failure], windowSeconds: Int, claimed: [String],
                    holding: [EndDeliveryQueries.Hold]) async throws
        -> (deleted: Int, ledger: EndDeliveryQueries.Outcome) { throw Unexpected(call: "settleEnds") }
    func claimRetired(stream: String, device: String, seconds: Int, owner: String?) async throws
        -> (stream: StreamSnapshotRow?, retired: [RetiredSessionQueries.Retired], total: Int) { throw Unexpected(call: "claimRetired") }
    func finishRetired(stream: String, device: String, tokens: [String]) async throws -> Int { throw Unexpected(call: "finishRetired") }
    func settleRetired(stream: String, device: String, refused: [DeviceTokenQueries.Invalidation], done: [String],
                       failed: [RetiredSessionQueries.Failure], windowSeconds: Int) async throws -> EndDeliveryQueries.Outcome {
        throw Unexpected(call: "settleRetired")
    }
    func updateClaimOwners(_ stream: String, except: String?) async throws -> [String] { throw Unexpected(call: "updateClaimOwners") }
    func claimUpdate(_ stream: String, claim: String, seconds: Int, owner: String?, deadOwners: [String]) async throws -> ProgressQueries.UpdateClaim {
        throw Unexpected(call: "claimUpdate")
    }
    func extendUpdate(_ stream: String, claim: String, seconds: Int) async throws -> Bool { throw Unexpected(call: "extendUpdate") }
    func releaseUpdate(_ stream: String, claim: String) async throws { throw Unexpected(call: "releaseUpdate") }
    func plannedStart(_ stream: String) async throws -> Date? { throw Unexpected(call: "plannedStart") }
    func markUpdateDone(_ stream: String, planned: Date) async throws { throw Unexpected(call: "markUpdateDone") }
    func retireOutlived(_ stream: String, devices: [String]) async throws { throw Unexpected(call: "retireOutlived") }
    func sessionsToUpdate(_ stream: String) async throws -> (stream: StreamSnapshotRow, sessions: [Session], known: SessionDeliveryQueries.Knowledge)? {
        throw Unexpected(call: "sessionsToUpdate")
    }
    func updatesAccepted(_ stream: String, accepted: [Session], shown: Date) async throws {
        throw Unexpected(call: "updatesAccepted")
    }
    func settleUpdates(_ stream: String, refused: [DeviceTokenQueries.Invalidation], accepted: [Session], shown: Date) async throws {
        throw Unexpected(call: "settleUpdates")
    }

    func reminderPages(_ stream: String, pageSize: Int, includingSent: Bool) async throws -> (stream: StreamSnapshotRow, ends: [String])? {
        throw Unexpected(call: "reminderPages")
    }
    func reminderProgress(_ stream: String) async throws -> (doneFor: Date?, followFor: Date?) { throw Unexpected(call: "reminderProgress") }
    func markReminderFollow(_ stream: String, planned: Date) async throws { throw Unexpected(call: "markReminderFollow") }
    func reminderChunk(_ stream: String, after cursor: String, through: String?, limit: Int) async throws
        -> (stream: StreamSnapshotRow?, users: [String], recipients: [ReminderQueries.Recipient]) { throw Unexpected(call: "reminderChunk") }
    func reminderClaimOwners(_ stream: String, except: String?) async throws -> [String] { throw Unexpected(call: "reminderClaimOwners") }
    func claimReminders(_ stream: String, planned: Date, leadSeconds: Int, devices: [(device: String, user: String)], seconds: Int,
                        owner: String?, deadOwners: [String]) async throws -> ReminderDeliveryQueries.Claim { throw Unexpected(call: "claimReminders") }
    func remindersDelivered(_ stream: String, claim: Int64, sent: [String]) async throws { throw Unexpected(call: "remindersDelivered") }
    func settleReminders(_ stream: String, users: [String], refused: [DeviceTokenQueries.Invalidation], claim: Int64?, sent: [String]) async throws {
        throw Unexpected(call: "settleReminders")
    }
    func markRemindersDone(_ stream: String, planned: Date) async throws { throw Unexpected(call: "markRemindersDone") }

    func claimChangedCountdowns(device: String, seconds: Int, owner: String?) async throws
        -> (streams: [String: StreamSnapshotRow], countdowns: [Countdown], timelines: [String: PlannedStartTimeline], elsewhere: Int, heldFor: Double?) {
        throw Unexpected(call: "claimChangedCountdowns")
    }
    func claimCountdownsToEnd(_ stream: String, seconds: Int, owner: String?) async throws
        -> (stream: StreamSnapshotRow, countdowns: [Countdown], elsewhere: Int, heldFor: Double?, inFlight: Int, timeline: PlannedStartTimeline)? {
        throw Unexpected(call: "claimCountdownsToEnd")
    }
    func claimCountdownsToUpdate(_ stream: String, seconds: Int, owner: String?) async throws
        -> (stream: StreamSnapshotRow, countdowns: [Countdown], inFlight: Int, timeline: PlannedStartTimeline)? {
        throw Unexpected(call: "claimCountdownsToUpdate")
    }
    func countdownsAccepted(_ accepted: [AndroidCountdownQueries.Settlement], stream: String, plannedStart: Date?, ended: Bool) async throws {
        throw Unexpected(call: "countdownsAccepted")
    }
    func settleCountdowns(_ settlements: [String: [AndroidCountdownQueries.Settlement]], refused: [DeviceTokenQueries.Invalidation],
                          plannedStart: Date?) async throws { throw Unexpected(call: "settleCountdowns") }
    func settleCountdownEnds(_ stream: String, _ settlements: [AndroidCountdownQueries.Settlement], refused: [DeviceTokenQueries.Invalidation],
                             done: [String], failed: [EndDeliveryQueries.Failure], windowSeconds: Int,
                             holding: [EndDeliveryQueries.Hold]) async throws -> EndDeliveryQueries.Outcome {
        throw Unexpected(call: "settleCountdownEnds")
    }
}
