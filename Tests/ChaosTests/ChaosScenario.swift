import Foundation
import TestSupport

/// One chaos scenario's system, seed, expectations and findings.
///
/// Every scenario gets its own database, Redis namespace, fake FCM and workers (`CountdownSystem` with the
/// `.chaos` defaults). It seeds a known set of streams and devices (each device belongs to exactly one stream),
/// records what PostgreSQL says should get a start (read from the contract tables before anything is sent),
/// injects its fault, waits until the system is quiet (`waitQuiet`), then compares the start pushes the fake FCM
/// accepted with that set (`result`):
///
/// - lost: expected (stream, push-to-start token) pairs never accepted;
/// - duplicated: extra copies of accepted pairs;
/// - unexpected: accepted pairs PostgreSQL did not ask for;
///
/// and checks the scenario's own bound and checks. Used from the one task that runs the scenario.
public final class ChaosScenario: @unchecked Sendable {
    public let system: CountdownSystem
    public let number: Int
    public let title: String
    /// The seeded streams' id prefix, `c<N>.`.
    public let prefix: String
    /// The seeded people's id prefix, `c<N>p`.
    public let people: String
    /// Whether the quick sizes apply (`COUNTDOWN_CHAOS` is not `full`).
    public let isQuick: Bool
    /// With the Android countdown on (`ANDROID_COUNTDOWN=on`), Android devices' countdown starts are expected and counted too.
    public let android: Bool
    /// Reads the fake's accepted messages incrementally.
    public let tally: PushTally
    /// What PostgreSQL says should get a start (`snapshotExpected`).
    public var expected: Set<StartKey> = []
    /// The epoch second the seeded starts fall due (`seed`).
    public var due: Double?
    /// Duplicates allowed (0 unless the scenario kills a worker: `reportKills`), and how the table shows it.
    public var duplicateBound = 0
    public var duplicateBoundText = "0"
    /// A scenario that judges by its own counts (scenario 20's device model) sets them here.
    public var counts: StartComparison?
    /// Notes for the report, in order.
    public private(set) var details: [String] = []
    /// The scenario's own checks, in order.
    public private(set) var checks: [(passed: Bool, text: String)] = []
    /// When the scenario began (before its system was built): the report's seconds.
    let started: Date

    init(system: CountdownSystem, number: Int, title: String, settings: [String: String], started: Date) {
        self.system = system
        self.number = number
        self.title = title
        self.started = started
        prefix = "c\(number)."
        people = "c\(number)p"
        isQuick = Self.quickSizes
        android = settings["ANDROID_COUNTDOWN"] == "on"
        tally = PushTally(recordPath: system.fakeRecordPath)
    }

    /// `COUNTDOWN_CHAOS=full` selects the documentation sizes; anything else the quick ones.
    static var quickSizes: Bool { ProcessInfo.processInfo.environment["COUNTDOWN_CHAOS"] != "full" }

    /// `quick` at the quick size, else `full`.
    public func size<T>(_ quick: T, _ full: T) -> T { isQuick ? quick : full }

    /// Now by the wall clock, in epoch seconds (the clock the fake stamps `receivedAt` with).
    public static var now: Double { Date().timeIntervalSince1970 }

    // MARK: Workers and seed

    /// Starts `count` workers and waits until each serves its metrics (throws with its log path if one exits).
    @discardableResult
    public func startWorkers(_ count: Int, _ overrides: [String: String] = [:]) async throws -> [SystemWorker] {
        try await system.startWorkers(count, overrides)
    }

    /// People and `streams` streams whose T-lead falls `dueIn` seconds from now (by the database's clock, rounded
    /// up to a whole second); waits for the outbox relay; returns the due epoch second.
    @discardableResult
    public func seed(_ streams: Int, dueIn: Double = 6) async throws -> Double {
        try await system.seedPeople(prefix: people, streams: streams)
        let due = try await system.databaseNow().rounded(.up) + dueIn
        self.due = due
        try await system.seedStreams(peoplePrefix: people, streamPrefix: prefix, count: streams, plannedAtEpoch: due + Double(system.startLead))
        try await snapshotExpected()
        try await system.waitOutboxDrained(timeout: .milliseconds(Int(max(1, due - Self.now - 0.5) * 1000)))
        return due
    }

    /// Reads the expected starts from the contract tables (before anything is sent).
    public func snapshotExpected() async throws {
        expected = try await system.expectedStarts(streamPrefix: prefix, android: android)
    }

    /// Waits until the wall clock reaches `epoch` (at most 600 s).
    public func waitUntil(_ epoch: Double) async throws {
        try await TestSupport.waitUntil(timeout: .seconds(600), every: .milliseconds(20), "the scenario's moment") { Self.now >= epoch }
    }

    // MARK: What the fake accepted

    /// The accepted start keys of this scenario's streams, duplicates included.
    public func acceptedKeys() throws -> [StartKey] {
        try tally.refresh().startKeys(prefix: prefix)
    }

    /// Whether every expected start was accepted.
    public func allAccepted() throws -> Bool {
        expected.isSubset(of: Set(try acceptedKeys()))
    }

    // MARK: Findings

    public func check(_ passed: Bool, _ text: String) {
        checks.append((passed, text))
    }

    public func note(_ text: String) {
        details.append(text)
    }

    /// Ledger rows claimed more than once (a sender died or failed with them in flight), summed.
    public func ledgerReclaims() async throws -> Int {
        try await system.ledgerCounts(streamPrefix: prefix).extraAttempts
    }
}
