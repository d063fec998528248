import CountdownDomain
@testable import CountdownFlows
import CountdownStore
import Postgres
import PushPayloads
import Telemetry
import Testing
import TestSupport

/// Rows a fan-out claimed in a transaction that then failed (its commit may still have gone through) are handed
/// to the settler, and the claim keeper gives back those still claimed once their claim expires; rows held again
/// by a later fan-out are never given back.
@Suite struct ClaimReleaseTests {
    static func row(_ device: String) -> StartLedger.Key { StartLedger.Key(stream: "s", user: "u", device: device) }

    @Test func rowsHeldAgainAreNotGivenBack() async throws {
        try await MigratedDatabase.with(prefix: "release") { client in
            let settler = StartSettlerBatchTests.running(client)
            await settler.release([Self.row("d1"), Self.row("d2")])
            await settler.hold([Self.row("d2")])
            #expect(await settler.takeReleasing() == [Self.row("d1")])
            #expect(await settler.takeReleasing().isEmpty, "handed over once")
        }
    }

    @Test func aFanoutWhoseCommitFailsHandsItsClaimsToTheSettler() async throws {
        try await MigratedDatabase.with(prefix: "release") { client in
            try await client.transaction { c in
                try MigratedDatabase.seedStream("s", [("u", "creator", ["d1", "d2"])], on: c)
                // Fails the commit of any transaction that wrote a ledger row.
                try c.execute("""
                    CREATE FUNCTION fail_commit() RETURNS trigger LANGUAGE plpgsql AS $$
                    BEGIN RAISE EXCEPTION 'commit refused'; END $$
                    """)
                try c.execute("""
                    CREATE CONSTRAINT TRIGGER fail_commit AFTER INSERT ON countdown_start_ledger
                        DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION fail_commit()
                    """)
            }
            let gateway = StartBatchTests.RecordingGateway()
            let context = FlowContext(database: client, push: gateway, payloads: try PushPayloadBuilder(), settings: FlowSettings(startLeadSeconds: 3600),
                                      transport: .fcm, metrics: CountingFlowMetrics(), logger: StartSettlerBatchTests.logger())
            await #expect(throws: PostgresError.self) { try await JobHandler(context: context).handleStarts(["s"]) }
            #expect(gateway.sent.value.isEmpty)
            #expect(Set(await context.settler.takeReleasing()) == [Self.row("d1"), Self.row("d2")])
            #expect(await context.settler.heldRows.isEmpty)
        }
    }
}
