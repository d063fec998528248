import Foundation
import JSON
import Redis
import TestSupport

/// Chaos scenario 20: a randomized run replayed on a model of each phone (`DeviceModel`).
///
/// Streams with creators and guests (iOS and Android devices, eligible and not), operations at random times around
/// T-lead (reschedules later and earlier, some across the 15-minute priority rule and a few past an activity's 8-hour
/// life, cancels, ready and started, late guests, late push-to-start and FCM tokens, late sessions), phones offline
/// for a random window (`OfflinePhones`: messages held and delivered on their return as the push services would) and a
/// worker SIGKILLed every few seconds (restarted; one sending starts when there is one within 1.5 s, so starts are
/// repeated). The harness plays the app (`PhoneApp`): after a push-to-start is accepted it registers the activity's
/// runtime token and id as a session 0.2-6 s later (some much later), and ends an older activity of the same stream.
/// Once everything has settled, every accepted push is on the model and the invariants are judged against PostgreSQL.
///
/// With a fake APNs (scenario 21, `PUSH_TRANSPORT=apns`, `APNS_BROADCAST=on`): iOS pushes go to the fake APNs, the
/// Android countdown to the fake FCM; six iPhones in ten report iOS 18 or later and are started on their stream's
/// broadcast channel, whose broadcasts the model replays on every subscribed activity (`DeviceModel+Channels`).
///
/// Seeded: the seed is noted; `CHAOS_DEVICE_SEED=<seed>` repeats a run's choices (timings still vary).
final class DeviceModelRun {
    let s: ChaosScenario
    let random: ScenarioRandom
    let fleet: DeviceFleet
    let model: DeviceModel
    let app: PhoneApp
    /// The record files of the fake FCM and (on broadcast channels) the fake APNs.
    let followers: [RecordFollower]
    /// The fake APNs, when the run pushes through it.
    let apns: FakeAPNsProcess?
    /// Each kill: when, and the starts its victim had in flight.
    private(set) var kills: [(at: Double, inFlight: Set<StartKey>)] = []
    private(set) var done: [String] = []
    /// When each stream left `scheduled` (the operation that moved it; the run's wall clock).
    private(set) var leftScheduled: [String: Double] = [:]
    private var lastRecord = ChaosScenario.now
    /// Each worker's id, as its log says.
    private var workerIDs: [ObjectIdentifier: String] = [:]

    init(_ scenario: ChaosScenario, seed: UInt64, apns: FakeAPNsProcess? = nil) {
        s = scenario
        self.apns = apns
        random = ScenarioRandom(seed: seed)
        fleet = DeviceFleet(random: random, prefix: scenario.prefix, streams: scenario.size(20, 120))
        if apns != nil {
            fleet.iosNeedsFCM = false
            fleet.reportOSVersions(newer: 0.6)
        }
        model = DeviceModel(leadSeconds: Double(scenario.system.startLead))
        for id in fleet.deviceOrder {
            guard let device = fleet.devices[id] else { continue }
            model.device(id, platform: device.platform)
            if let token = device.pushToStart { model.pushToStartToken(id, token) }
            if let token = device.fcm { model.fcmToken(id, token) }
        }
        app = PhoneApp(system: scenario.system, fleet: fleet, model: model, random: random)
        followers = [RecordFollower(path: scenario.system.fakeRecordPath)] + (apns.map { [RecordFollower(path: Self.apnsRecordPath($0))] } ?? [])
    }

    /// Where the fake APNs of a run records what it accepted.
    static func apnsRecordPath(_ apns: FakeAPNsProcess) -> String { (apns.directory as NSString).appendingPathComponent("accepted.jsonl") }

    /// The workers' settings of scenarios 20 and 21 (`END_DISMISS_AFTER_SECONDS=3`: an Android end's ttl then rests on
    /// the countdown's `staleAt`, SPEC 12.2, which the offline phones test), and the fakes' latency.
    static let settings = [
        "START_LEAD_SECONDS": "20", "EXPIRE_AFTER_SECONDS": "6", "WORKER_CONCURRENCY": "8", "JOB_LEASE_SECONDS": "5",
        "ANDROID_COUNTDOWN": "on", "END_DISMISS_AFTER_SECONDS": "3",
    ]
    static let latencyMilliseconds = 30

    /// `CHAOS_DEVICE_SEED` when set, else a fresh one.
    static func seed(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> UInt64 {
        environment["CHAOS_DEVICE_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1..<1_000_000_000)
    }

    /// The scenario body: returns nil (the run sets `s.counts` from the model).
    static func run(_ scenario: ChaosScenario) async throws -> Set<StartKey>? {
        let seed = seed()
        scenario.note("seed \(seed) (CHAOS_DEVICE_SEED=\(seed) repeats the run's choices)")
        try await DeviceModelRun(scenario, seed: seed).run()
        return nil
    }

    /// The scenario body on broadcast channels: a fake APNs (its logs and record file in the system's directory, a
    /// latency fault of `latencyMilliseconds` as the fake FCM has) and the workers' `PUSH_TRANSPORT=apns`, `APNS_BROADCAST=on`.
    static func runOnChannels(_ scenario: ChaosScenario) async throws -> Set<StartKey>? {
        let seed = seed()
        scenario.note("seed \(seed) (CHAOS_DEVICE_SEED=\(seed) repeats the run's choices)")
        let directory = (scenario.system.directory as NSString).appendingPathComponent("fake-apns")
        let apns = try await FakeAPNsProcess(arguments: ["--record", (directory as NSString).appendingPathComponent("accepted.jsonl")],
                                             logLevel: "debug", directory: directory)
        do {
            try await apns.fault(["latencyMs": Self.latencyMilliseconds])
            scenario.system.settings.merge(apns.workerEnvironment.merging(["APNS_BROADCAST": "on"]) { $1 }) { $1 }
            try await DeviceModelRun(scenario, seed: seed, apns: apns).run()
        } catch {
            _ = try? await offThePool { apns.stop() }
            throw error
        }
        _ = try? await offThePool { apns.stop() }
        return nil
    }

    func run() async throws {
        let system = s.system
        let lead = Double(system.startLead)
        let window = s.size(20.0, 40.0)
        _ = try await s.startWorkers(3)
        let t0 = ChaosScenario.now
        let databaseT0 = try await system.databaseNow()
        var planned: [String: Int] = [:]
        for stream in fleet.streams {
            planned[stream] = Int((databaseT0 + lead + random.uniform(3, window - 4)).rounded())
        }
        try await fleet.seed(system.db, plannedAt: planned)
        var operations = DeviceOperation.plan(fleet: fleet, random: random, t0: t0, window: window,
                                              tLead: planned.mapValues { t0 + Double($0) - lead - databaseT0 })
        awayWindows(t0: t0, window: window)
        let android = fleet.devices.values.filter { $0.platform == "android" }.count
        s.note("\(fleet.streams.count) streams, \(fleet.users.count) users, \(fleet.devices.count) devices (\(android) Android), "
               + "\(operations.count) operations over \(Int(window))s around T-lead (START_LEAD_SECONDS=\(system.startLead))")
        var nextKill = t0 + 3
        let deadline = t0 + window + s.size(60.0, 120.0)
        lastRecord = ChaosScenario.now
        var settled = false
        while ChaosScenario.now < deadline {
            try await poll()
            while let first = operations.first, first.at <= ChaosScenario.now {
                operations.removeFirst()
                try await apply(first.action())
                done.append(first.what)
            }
            if ChaosScenario.now >= nextKill && ChaosScenario.now < t0 + window + 2, !system.workers.isEmpty,
               case let busy = try await workerSendingStarts(), busy != nil || ChaosScenario.now >= nextKill + 1.5 {
                // Mid start burst where one is on: a kill with starts in flight repeats them (the phones' duplicates).
                let victim = busy ?? random.choice(system.workers)
                let at = ChaosScenario.now
                kills.append((at, try await s.killAndRecord(victim)))
                system.retire(victim)
                try system.startWorker()
                nextKill = ChaosScenario.now + random.uniform(2.5, 5)
            }
            if operations.isEmpty && app.pending.isEmpty && ChaosScenario.now > max(t0 + window, model.phones.lastReturn) + 2
                && ChaosScenario.now - lastRecord >= 2,
               try await system.outboxBacklog() == 0, try await soonDue(within: 3) == 0 {
                settled = true
                break
            }
            try await Task.sleep(for: .milliseconds(100))
        }
        if !settled {
            s.check(false, "settled within \(Int((deadline - t0).rounded()))s of the first operation")
        }
        try await poll()
        try await judge(at: ChaosScenario.now)
    }

    /// Replays the accepted pushes written since the last poll; registers the sessions whose moment has come.
    private func poll() async throws {
        // The fakes' lines merged by the moment each accepted them (each file is in that order already).
        let records = try followers.flatMap { try $0.new() }.enumerated()
            .sorted { ($0.element["receivedAt"]?.seconds ?? 0, $0.offset) < ($1.element["receivedAt"]?.seconds ?? 0, $1.offset) }.map(\.element)
        if !records.isEmpty {
            lastRecord = ChaosScenario.now
        }
        for record in records {
            for opened in model.receiveAny(record) {
                app.opened(opened)
            }
        }
        // A phone comes back half a second after its window (messages accepted just before are read by then).
        for opened in model.returns(by: ChaosScenario.now - 0.5) {
            app.opened(opened)
        }
        try await app.tick()
    }

    /// Writes one operation as the backend would; notes in the fleet when it could first have had an effect.
    private func apply(_ action: DeviceOperation.Action) async throws {
        let system = s.system
        let began = ChaosScenario.now
        switch action {
        case .later(let stream, let seconds), .earlier(let stream, let seconds), .set(let stream, let seconds):
            let now = try await system.databaseNow()
            var planned: Double
            switch action {
            case .set: planned = now + seconds
            case .later: planned = max(Double(fleet.planned[stream] ?? 0) + seconds, now + 1)
            default: planned = max(Double(fleet.planned[stream] ?? 0) - seconds, now + 1)
            }
            planned = planned.rounded()
            try await system.execute("UPDATE streams SET planned_start_at = to_timestamp($1) WHERE id = $2 AND status = 'scheduled'", [planned, stream])
            let status = try await system.query("SELECT status FROM streams WHERE id = $1", [stream]).first?.decode("status", as: String.self)
            if status == "scheduled" {
                fleet.planned[stream] = Int(planned)
            }
        case .status(let stream, let status):
            let changed = try await system.query("""
                UPDATE streams SET status = $1 WHERE id = $2 AND status IN ('scheduled', 'ready') RETURNING id
                """, [status, stream])
            if !changed.isEmpty && leftScheduled[stream] == nil {
                leftScheduled[stream] = began
            }
        case .guest(let stream, let user):
            guard !(fleet.participants[stream] ?? []).contains(where: { $0.user == user }) else { return }
            fleet.participants[stream, default: []].append((user, began))
            let position = fleet.participants[stream, default: []].count
            try await system.execute("INSERT INTO stream_participants (stream_id, user_id, role, position) VALUES ($1, $2, 'guest', $3)",
                                     [stream, user, position])
        case .pushToStartToken(let device):
            let token = DeviceFleet.token("pts-late", device)
            fleet.devices[device]?.pushToStart = token
            fleet.tokenSince[device] = began
            model.pushToStartToken(device, token)
            try await system.execute("UPDATE devices SET push_to_start_token = $1 WHERE device_id = $2", [token, device])
        case .fcmToken(let device):
            let token = "fcm-" + DeviceFleet.token("fcm-late", device)
            let wasEligible = fleet.isEligible(device)
            fleet.devices[device]?.fcm = token
            if !wasEligible {
                fleet.tokenSince[device] = began
            }
            model.fcmToken(device, token)
            try await system.execute("UPDATE devices SET fcm_token = $1 WHERE device_id = $2", [token, device])
        }
    }

    /// A worker with starts of the run in flight (start-ledger rows `sending` under it), if any.
    private func workerSendingStarts() async throws -> SystemWorker? {
        let owners = Set(try await s.system.query("""
            SELECT DISTINCT claimed_by FROM countdown_start_ledger WHERE stream_id LIKE $1 AND status = 'sending' AND claimed_by IS NOT NULL
            """, [s.prefix + "%"]).map { try $0.decode("claimed_by", as: String.self) })
        guard !owners.isEmpty else { return nil }
        for worker in s.system.workers {
            let key = ObjectIdentifier(worker)
            if workerIDs[key] == nil {
                workerIDs[key] = try await worker.workerID()
            }
            if let id = workerIDs[key], owners.contains(id) {
                return worker
            }
        }
        return nil
    }

    /// Phones offline for a window: one in four of the iOS and Android devices, away from a random moment of the run's
    /// `window` for 2 s up to `window` seconds (some across their streams' T-lead, planned start and end); one iOS phone
    /// in three runs an app without the duplicate ending.
    private func awayWindows(t0: Double, window: Double) {
        for id in fleet.deviceOrder {
            guard let device = fleet.devices[id], device.platform == "ios" || device.platform == "android" else { continue }
            if random.random() < 0.25 {
                let from = t0 + random.uniform(0, window)
                model.phones.away(id, from: from, until: from + random.uniform(2, window))
            }
            if device.platform == "ios" && random.random() < 1.0 / 3 {
                app.withoutDuplicateEnding.insert(id)
            }
        }
    }

    /// Jobs due within `seconds` (by the Redis clock) and jobs leased, in one Redis moment.
    private func soonDue(within seconds: Double) async throws -> Int {
        let script = """
            local t = redis.call('TIME')
            local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
            return {redis.call('ZCOUNT', KEYS[1], '-inf', now + tonumber(ARGV[1])), redis.call('ZCARD', KEYS[2])}
            """
        let prefix = "{\(s.system.namespace)}:q1:"
        let reply = try await s.system.redis.command(["EVAL", RedisArgument(script), "2", RedisArgument(prefix + "due"), RedisArgument(prefix + "leased"),
                                                      RedisArgument(String(Int(seconds * 1000)))])
        return (try reply.throwIfError(context: "soon due").array ?? []).reduce(0) { $0 + Int($1.integer ?? 0) }
    }
}
