import Foundation
import Postgres
import PushPayloads

/// Sends push-to-start pushes for one stream: to every eligible device (the T-60 job) or to one device or
/// user (backfill). The start ledger decides: one start per (stream, user, device), ever. Rows are claimed
/// (`sending`) before the push and settled after it, so a crashed worker's half-done fan-out is finished by
/// the retry, not repeated; only the pushes in flight at the crash can repeat.
struct StartFanout: Sendable {
    let context: FlowContext

    private struct Target: Sendable {
        var candidate: DeviceCandidate
        var skip: StartSkipReason?
    }

    private struct Plan: Sendable {
        var stream: StreamSnapshotRow
        var targets: [String: Target]  // by "user\u{0}device"
        var claimed: [(user: String, device: String)]
        var openByOthers: Int
    }

    func run(stream streamID: String, scope: FanoutScope) async throws -> HandlerOutcome {
        let settings = context.settings
        let transport = context.transport
        let claimSeconds = context.claimSeconds
        let prepared: Result<Plan, SkipOrReschedule> = try await context.database.transaction { connection in
            guard let stream = try StreamSnapshotQuery.load(streamID, on: connection) else {
                return .failure(.skip("stream_missing"))
            }
            guard stream.status == .scheduled else { return .failure(.skip("stream_\(stream.status.rawValue)")) }
            let planned = stream.snapshot.plannedStartAt
            guard stream.now < planned else { return .failure(.skip("too_late")) }
            let windowOpens = planned.addingTimeInterval(-Double(settings.startLeadSeconds))
            if stream.now.addingTimeInterval(FlowContext.earlyTolerance) < windowOpens {
                return .failure(.reschedule(windowOpens, now: stream.now))
            }
            var targets: [String: Target] = [:]
            for candidate in try Self.candidates(streamID, scope: scope, on: connection) {
                let key = candidate.userID + "\u{0}" + candidate.deviceID
                targets[key] = Target(candidate: candidate, skip: StartEligibility.skipReason(for: candidate, transport: transport))
            }
            try Self.recordTargets(streamID, targets: Array(targets.values), on: connection)
            let claimed = try Self.claim(streamID, scope: scope, seconds: claimSeconds, on: connection)
            let open = try connection.query("""
                SELECT count(*) AS open FROM countdown_start_ledger
                WHERE stream_id = $1 AND status = 'sending' AND claimed_until > now()
                """, [streamID]).first?.decode("open", as: Int.self) ?? 0
            return .success(Plan(stream: stream, targets: targets, claimed: claimed, openByOthers: open - claimed.count))
        }
        let plan: Plan
        switch prepared {
        case .failure(.skip(let reason)):
            return .skipped(reason: reason)
        case .failure(.reschedule(let at, let now)):
            return .reschedule(to: at, now: now, reason: "start window opens later")
        case .success(let value):
            plan = value
        }
        for target in plan.targets.values {
            if let skip = target.skip { context.metrics.skip(kind: "start", reason: skip.rawValue) }
        }
        return try await send(plan, scope: scope)
    }

    private func send(_ plan: Plan, scope: FanoutScope) async throws -> HandlerOutcome {
        var pushes: [OutgoingPush] = []
        var sentKeys: [(user: String, device: String, pts: String, fcm: String)] = []
        var settlements: [LedgerSettlement] = []
        for (user, device) in plan.claimed {
            guard let target = plan.targets[user + "\u{0}" + device], target.skip == nil,
                  let pts = target.candidate.pushToStartToken else {
                settlements.append(LedgerSettlement(user: user, device: device, status: "skipped", reason: "no_longer_eligible"))
                continue
            }
            let language = PayloadLanguage.resolve(deviceLocale: target.candidate.locale, userLocale: target.candidate.userLocale)
            let role = ParticipantRole(rawValue: target.candidate.role) ?? .guest
            do {
                let payload = try context.payloads.start(plan.stream.snapshot, role: role, language: language, now: plan.stream.now)
                let fcm = target.candidate.fcmToken ?? ""
                pushes.append(.liveActivity(payload, fcmToken: fcm, activityToken: pts))
                sentKeys.append((user, device, pts, fcm))
            } catch {
                settlements.append(LedgerSettlement(user: user, device: device, status: "failed", reason: "payload_error"))
                context.logger.error("start payload could not be built", ["stream": .string(plan.stream.snapshot.id), "error": .error(error)])
            }
        }
        let deliveries = await context.push.sendAll(pushes, kind: .start)
        var retryAfter: Duration?
        var needsRetry = false
        var deadTokens: [(device: String, fcm: String, pts: String)] = []
        for (key, delivery) in zip(sentKeys, deliveries) {
            switch delivery {
            case .accepted(let name):
                settlements.append(LedgerSettlement(user: key.user, device: key.device, status: "sent", reason: nil, name: name, tokens: (key.fcm, key.pts)))
            case .deadToken(let reason):
                settlements.append(LedgerSettlement(user: key.user, device: key.device, status: "failed", reason: "dead_token:" + reason, name: nil, tokens: (key.fcm, key.pts)))
                deadTokens.append((key.device, key.fcm, key.pts))
            case .rejected(let reason, let tokenLevel):
                settlements.append(LedgerSettlement(user: key.user, device: key.device, status: "failed",
                                                    reason: (tokenLevel ? "dead_token:" : "rejected:") + reason, name: nil))
                if tokenLevel { deadTokens.append((key.device, key.fcm, key.pts)) }
            case .retry(let after, let reason):
                needsRetry = true
                if let after { retryAfter = max(retryAfter ?? .zero, after) }
                settlements.append(LedgerSettlement(user: key.user, device: key.device, status: "pending", reason: "retry:" + reason, name: nil, tokens: (key.fcm, key.pts)))
            case .configurationError(let reason):
                needsRetry = true
                retryAfter = max(retryAfter ?? .zero, .seconds(60))
                settlements.append(LedgerSettlement(user: key.user, device: key.device, status: "pending", reason: "config:" + reason, name: nil, tokens: (key.fcm, key.pts)))
            }
        }
        let streamID = plan.stream.snapshot.id
        let planned = plan.stream.snapshot.plannedStartAt
        let transport = context.transport
        let settled = settlements
        let dead = deadTokens
        let finished = try await context.database.transaction { connection -> Bool in
            try LedgerSettlement.apply(settled, stream: streamID, on: connection)
            try TokenHygiene.clearStartTokens(dead, transport: transport, on: connection)
            guard scope == .stream else { return true }
            let open = try connection.query("""
                SELECT count(*) AS open FROM countdown_start_ledger WHERE stream_id = $1 AND status IN ('pending', 'sending')
                """, [streamID]).first?.decode("open", as: Int.self) ?? 0
            if open == 0 {
                try connection.execute("""
                    INSERT INTO countdown_stream_progress (stream_id, start_done_for) VALUES ($1, $2)
                    ON CONFLICT (stream_id) DO UPDATE SET start_done_for = EXCLUDED.start_done_for, updated_at = now()
                    """, [streamID, planned])
            }
            return open == 0
        }
        let sent = settlements.filter { $0.status == "sent" }.count
        if needsRetry { return .retry(after: retryAfter, reason: "push_retry") }
        if !finished && plan.openByOthers > 0 {
            return .retry(after: .seconds(context.claimSeconds), reason: "rows_claimed_elsewhere")
        }
        return .done(detail: "sent \(sent) of \(plan.claimed.count) claimed, \(plan.targets.count) devices considered")
    }

    private enum SkipOrReschedule: Error { case skip(String), reschedule(Date, now: Date) }

    /// Every device of every participant (or of the scoped device/user), with what eligibility needs.
    private static func candidates(_ streamID: String, scope: FanoutScope, on connection: PostgresConnection) throws -> [DeviceCandidate] {
        var sql = """
            SELECT p.user_id, p.role, d.device_id, d.platform, d.fcm_token, d.push_to_start_token,
                   d.locale AS locale, u.locale AS user_locale, coalesce(np.enabled, true) AS enabled
            FROM stream_participants p
            JOIN users u ON u.id = p.user_id
            JOIN devices d ON d.user_id = p.user_id
            LEFT JOIN notification_preferences np ON np.user_id = p.user_id AND np.category = 'live_stream'
            WHERE p.stream_id = $1
            """
        var parameters: [any PostgresEncodable] = [streamID]
        switch scope {
        case .stream: break
        case .device(let device):
            sql += " AND d.device_id = $2"
            parameters.append(device)
        case .user(let user):
            sql += " AND p.user_id = $2"
            parameters.append(user)
        }
        return try connection.query(sql, parameters).map { row in
            DeviceCandidate(
                userID: try row.decode("user_id"), role: try row.decode("role"), deviceID: try row.decode("device_id"),
                platform: try row.decode("platform"), fcmToken: try row.decode("fcm_token"),
                pushToStartToken: try row.decode("push_to_start_token"), locale: try row.decode("locale"), userLocale: try row.decode("user_locale"),
                liveStreamEnabled: try row.decode("enabled"))
        }
    }

    /// Eligible devices become `pending`, others `skipped` with the reason. Rows already sent, in flight or
    /// failed stay as they are, except a skipped row, or one failed on a dead token that the device has since
    /// replaced (a different token hash), which reopen when the device is eligible again.
    private static func recordTargets(_ streamID: String, targets: [Target], on connection: PostgresConnection) throws {
        guard !targets.isEmpty else { return }
        try connection.execute("""
            INSERT INTO countdown_start_ledger (stream_id, user_id, device_id, status, reason, token_hash)
            SELECT $1, t.user_id, t.device_id, t.status, t.reason, md5(coalesce(t.fcm, '') || ':' || coalesce(t.pts, ''))
            FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) AS t(user_id, device_id, status, reason, fcm, pts)
            ON CONFLICT (stream_id, user_id, device_id) DO UPDATE
                SET status = EXCLUDED.status, reason = EXCLUDED.reason, token_hash = EXCLUDED.token_hash, updated_at = now()
                WHERE countdown_start_ledger.status = 'skipped'
                   OR (countdown_start_ledger.status = 'failed' AND countdown_start_ledger.reason LIKE 'dead_token:%'
                       AND EXCLUDED.status = 'pending' AND countdown_start_ledger.token_hash IS DISTINCT FROM EXCLUDED.token_hash)
            """, [
                streamID,
                PostgresTextArray(targets.map(\.candidate.userID)),
                PostgresTextArray(targets.map(\.candidate.deviceID)),
                PostgresTextArray(targets.map { $0.skip == nil ? "pending" : "skipped" }),
                PostgresTextArray(targets.map { $0.skip?.rawValue }),
                PostgresTextArray(targets.map(\.candidate.fcmToken)),
                PostgresTextArray(targets.map(\.candidate.pushToStartToken)),
            ])
    }

    /// Takes the scope's pending rows (and rows whose sender's claim expired) for this sender.
    private static func claim(_ streamID: String, scope: FanoutScope, seconds: Int, on connection: PostgresConnection) throws -> [(user: String, device: String)] {
        var filter = ""
        var parameters: [any PostgresEncodable] = [streamID, seconds]
        switch scope {
        case .stream: break
        case .device(let device):
            filter = " AND device_id = $3"
            parameters.append(device)
        case .user(let user):
            filter = " AND user_id = $3"
            parameters.append(user)
        }
        return try connection.query("""
            UPDATE countdown_start_ledger l
            SET status = 'sending', claimed_until = now() + make_interval(secs => $2), attempts = l.attempts + 1, updated_at = now()
            FROM (SELECT user_id, device_id FROM countdown_start_ledger
                  WHERE stream_id = $1 AND (status = 'pending' OR (status = 'sending' AND claimed_until < now()))\(filter)
                  FOR UPDATE SKIP LOCKED) AS c
            WHERE l.stream_id = $1 AND l.user_id = c.user_id AND l.device_id = c.device_id
            RETURNING l.user_id, l.device_id
            """, parameters).map { (try $0.decode("user_id", as: String.self), try $0.decode("device_id", as: String.self)) }
    }
}
