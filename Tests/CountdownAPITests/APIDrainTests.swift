import BlockingIO
import CountdownAPI
import CountdownCommands
import CountdownStore
import HTTPServer
import Lifecycle
import Telemetry
import Testing
import TestSupport

@Suite("The API drains before it stops", .timeLimit(.minutes(1)))
struct APIDrainTests {
    /// A store whose `ping` (the readiness check) waits until opened; nothing else is used.
    final class HeldPingStore: APIStore {
        let gate = AsyncGate()
        let pinged = Locked(false)

        func ping() async throws {
            pinged.withLock { $0 = true }
            await gate.pass()
        }

        func registerDevice(_ registration: DeviceRegistration, userID: String?) async throws -> DeviceUpsertOutcome { throw Unused() }
        func registerSession(_ session: SessionRegistration, userID: String) async throws { throw Unused() }
        func removeSession(streamID: String, deviceID: String, activityID: String?, userID: String) async throws { throw Unused() }
        func cancelStream(id: String, caller: Caller) async throws -> StreamCommands.CancelReport { throw Unused() }
        func recordOSVersion(deviceID: String, version: String, major: Int) async throws { throw Unused() }
        func liveActivityChannel(streamID: String) async throws -> String? { throw Unused() }

        struct Unused: Error {}
    }

    @Test func aRequestInFlightIsAnsweredThenTheServiceIsIdle() async throws {
        let store = HeldPingStore()
        let api = try TestAPI(store: store)
        defer { store.gate.open() }
        async let held = api.send("GET", "/readyz")
        try await waitUntil(timeout: .seconds(20), "the readiness check is in flight") { store.pinged.value }
        api.service.beginDraining()
        #expect(await withTimeout(.milliseconds(50)) { _ = await api.service.waitUntilIdle() } == false,
                "a drain cut short (the group's grace deadline) returns with the request still in flight")
        let idle = Task { await api.service.waitUntilIdle() }
        #expect(api.service.requestsInFlight == 1)
        store.gate.open()
        #expect(await held.status == 200, "the request that came before the drain is answered")
        #expect(await idle.value)
        #expect(await api.send("GET", "/readyz").status == 503, "not ready once draining")
    }

    /// Records when its signal stops it.
    struct Recorded: Service {
        let name: String
        let log: Locked<[String]>

        func run(shutdown: ShutdownSignal) async throws {
            await shutdown.wait()
            log.withLock { $0.append("\(name) stopped") }
        }
    }

    @Test func theListenerDrainsAndStopsBeforeTheServicesStartedBeforeIt() async throws {
        let log = Locked([String]())
        let server = HTTPServer(configuration: HTTPServerConfiguration(address: "127.0.0.1:0", threads: 1), asyncHandler: { _ in .text("ok\n") })
        try server.start()
        let listener = HTTPServerService(name: "api-server", server: server) { log.withLock { $0.append("api-server drained") } }
        let shutdown = ShutdownSignal()
        shutdown.trigger()
        let group = ServiceGroup(services: [Recorded(name: "request-deadlines", log: log), listener], grace: .seconds(20), logger: Logger(level: .error))
        let outcome = await group.run(shutdown: shutdown)
        #expect(outcome.stoppedInTime && !outcome.failed)
        #expect(log.value == ["api-server drained", "request-deadlines stopped"], "deadlines still fire while the API drains")
    }
}
