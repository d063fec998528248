import CountdownDomain
@testable import CountdownFlows
import CountdownStore
import Foundation
import PushPayloads
import Testing

/// The flows run on their store seams alone: no database behind them, only what the seams answer.
@Suite struct FlowsOnFakeStoresTests {
    static func context(_ stores: FakeFlowStores) throws -> FlowContext {
        FlowContext(database: stores, settler: StartSettler(store: stores, logger: StartSettlerBatchTests.logger()),
                    push: StartBatchTests.RecordingGateway(), payloads: try PushPayloadBuilder(), settings: FlowSettings(), transport: .fcm,
                    metrics: CountingFlowMetrics(), logger: StartSettlerBatchTests.logger(), liveness: AnonymousWorker(),
                    endRecovery: BackoffOnlyEnds())
    }

    static func row(_ device: String) -> StartLedger.Key { StartLedger.Key(stream: "s1", user: "u", device: device) }

    @Test func aRacedLedgerInsertIsPlannedAgainWithOnConflict() async throws {
        let stores = FakeFlowStores(streamsWithRows: ["s2"], planAnswers: [
            { _ in throw StoreError(.raced, context: "start ledger rows of 2 streams") },
            { _ in ["s1": .skipped(reason: "stream_missing"), "s2": .done(detail: "nothing to send")] },
        ])
        let outcomes = try await JobHandler(context: try Self.context(stores)).handleStarts(["s1", "s2", "s1"])
        #expect(outcomes == ["s1": .skipped(reason: "stream_missing"), "s2": .done(detail: "nothing to send")])
        let calls = stores.planCalls.value
        #expect(calls.map(\.streams) == [["s1", "s2"], ["s1", "s2"]], "each stream once, in the order asked")
        #expect(calls.map(\.racing) == [false, true])
        #expect(calls.map(\.withoutRows) == [["s1"], []], "after a race every row is read again")
    }

    @Test func aPlanningTransactionThatFailsHandsItsClaimsToTheSettler() async throws {
        let stores = FakeFlowStores(planAnswers: [{ noteClaims in
            noteClaims([Self.row("d1")])
            noteClaims([Self.row("d1"), Self.row("d2")])
            throw FakeFlowStores.Unexpected(call: "commit")
        }])
        let context = try Self.context(stores)
        await #expect(throws: FakeFlowStores.Unexpected.self) { try await JobHandler(context: context).handle(.start(stream: "s1")) }
        #expect(Set(await context.settler.takeReleasing()) == [Self.row("d1"), Self.row("d2")], "the last rows noted")
        #expect(await context.settler.heldRows.isEmpty)
    }

    @Test func aSecondRaceFailsTheRun() async throws {
        let stores = FakeFlowStores(planAnswers: [
            { _ in throw StoreError(.raced, context: "first") },
            { _ in throw StoreError(.raced, context: "again") },
        ])
        await #expect(throws: StoreError.self) { try await JobHandler(context: try Self.context(stores)).handle(.start(stream: "s1")) }
        #expect(stores.planCalls.value.count == 2, "a race is run again once, with ON CONFLICT; a second one is an error")
    }

    @Test func theExpiryIsReadAsTheStoreAnswers() async throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let answers: [(StreamQueries.Expiry, HandlerOutcome)] = [
            (.expired, .done(detail: "stream expired")),
            (.missing, .skipped(reason: "stream_missing")),
            (.notScheduled(status: "live"), .skipped(reason: "stream_live")),
            (.later(expiresAt: now.addingTimeInterval(90), now: now), .reschedule(after: .seconds(90), reason: "expires later")),
        ]
        for (expiry, outcome) in answers {
            #expect(try await JobHandler(context: try Self.context(FakeFlowStores(expiry: expiry))).handle(.expire(stream: "s1")) == outcome)
        }
    }
}
