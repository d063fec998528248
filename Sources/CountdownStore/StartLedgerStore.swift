import CountdownDomain
import Postgres

/// The start ledger: one row per (stream, user, device), the record that makes a start happen once.
public enum StartLedgerStore {
    /// A device a fan-out considered, with the reason it gets no push (nil: eligible).
    public struct Target: Sendable {
        public var stream: String
        public var candidate: DeviceCandidate
        public var skip: StartSkipReason?
        /// `TokenHash.of` the candidate's tokens: written with the row, and with its push's outcome (`LedgerSettlement`).
        public let tokenHash: String

        public init(stream: String, candidate: DeviceCandidate, skip: StartSkipReason?) {
            self.stream = stream
            self.candidate = candidate
            self.skip = skip
            tokenHash = TokenHash.of(fcm: candidate.fcmToken, pts: candidate.pushToStartToken)
        }
    }

    /// Every device of every participant of `streams` (or of the scoped device/user), with what eligibility needs
    /// (an empty token reads as absent).
    public static func candidates(_ streams: [String], scope: FanoutScope, on connection: PostgresConnection) throws -> [(String, DeviceCandidate)] {
        var sql = """
            SELECT p.stream_id, p.user_id, p.role, d.device_id, d.platform,
                   nullif(d.fcm_token, '') AS fcm_token, nullif(d.push_to_start_token, '') AS push_to_start_token,
                   d.locale AS locale, u.locale AS user_locale, coalesce(np.enabled, true) AS enabled
            FROM stream_participants p
            JOIN users u ON u.id = p.user_id
            JOIN devices d ON d.user_id = p.user_id
            LEFT JOIN notification_preferences np ON np.user_id = p.user_id AND np.category = 'live_stream'
            WHERE p.stream_id = ANY($1::text[])
            """
        var parameters: [any PostgresEncodable] = [PostgresTextArray(streams)]
        narrow(&sql, &parameters, to: scope, device: "d.device_id", user: "p.user_id")
        return try connection.query(sql, parameters).map { row in
            (try row.decode("stream_id"), DeviceCandidate(
                userID: try row.decode("user_id"), role: try row.decode("role"), deviceID: try row.decode("device_id"),
                platform: try row.decode("platform"), fcmToken: try row.decode("fcm_token"),
                pushToStartToken: try row.decode("push_to_start_token"), locale: try row.decode("locale"), userLocale: try row.decode("user_locale"),
                liveStreamEnabled: try row.decode("enabled")))
        }
    }

    /// Who claims rows as they are recorded: `owner` for `seconds`, at most `limit` rows.
    public struct InsertClaim: Sendable {
        public var owner: String?
        public var seconds: Int
        public var limit: Int

        public init(owner: String?, seconds: Int, limit: Int) {
            self.owner = owner
            self.seconds = seconds
            self.limit = limit
        }
    }

    /// Eligible devices become `pending`, others `skipped` with the reason. Rows already sent, in flight or
    /// failed stay as they are, except a skipped row, or one failed on a dead token that the device has since
    /// replaced (a different token hash), which reopen when the device is eligible again.
    ///
    /// The first `claim.limit` eligible rows written (in key order) are written already claimed (`sending`, as
    /// `claim` would leave them), so a fan-out writes each row twice (recorded and claimed, then settled), not three
    /// times; returns the rows this call claimed. `claim` then takes what is left of the page.
    ///
    /// The scope's rows are read first, so new rows go in with a plain `INSERT` (about a third of the cost of an
    /// `INSERT … ON CONFLICT`, whose speculative insertion probes and confirms every row) and only rows that
    /// reopen are updated. A fan-out of the same stream that inserts a row in between makes the `INSERT` fail
    /// with a unique violation, thrown as `StoreError(.raced)`: the caller then runs its transaction again with
    /// `racing`, which resolves every row with `ON CONFLICT`.
    ///
    /// `withoutRows` names streams the caller saw without any ledger row moments before (`ledgerOwners`): their rows
    /// are not read again. A row another fan-out wrote since makes the insert fail with `StoreError(.raced)`, as a row
    /// written after the read does, and the caller runs again with `racing`.
    public static func recordTargets(_ targets: [Target], scope: FanoutScope = .stream, claim: InsertClaim, racing: Bool = false,
                                     withoutRows: Set<String> = [], on connection: PostgresConnection) throws -> RecordedTargets {
        // In key order, as every writer of ledger rows locks them, so two fan-outs cannot deadlock.
        let sorted = targets.sorted { ($0.stream, $0.candidate.userID, $0.candidate.deviceID) < ($1.stream, $1.candidate.userID, $1.candidate.deviceID) }
        guard !sorted.isEmpty else { return RecordedTargets(claimed: [], foundEarlierRows: false) }
        let hashed = sorted.map { Written(target: $0, tokenHash: $0.tokenHash) }
        if racing { return RecordedTargets(claimed: try upsert(claiming(hashed, limit: claim.limit), claim: claim, on: connection), foundEarlierRows: true) }
        let unread = Set(sorted.map(\.stream)).subtracting(withoutRows)
        let recorded = unread.isEmpty ? [:] : try recordedRows(Array(unread), scope: scope, on: connection)
        let writable = hashed.compactMap { row -> Written? in
            guard let existing = recorded[Key(row.target)] else { return row }
            var row = row
            row.reopens = true
            return StartLedgerMachine.reopens(existing, skip: row.target.skip, tokenHash: row.target.tokenHash) ? row : nil
        }
        let rows = claiming(writable, limit: claim.limit)
        let fresh = rows.filter { !$0.reopens }
        let reopened = rows.filter(\.reopens)
        var claimed: [(stream: String, user: String, device: String)] = []
        if !fresh.isEmpty {
            do {
                try connection.execute(insertRows, writeParameters(fresh, claim: claim))
            } catch let error as PostgresError where error.isUniqueViolation {
                throw StoreError(.raced, context: "start ledger rows of \(Set(fresh.map(\.target.stream)).count) streams")
            }
            claimed = fresh.filter { $0.status == "sending" }.map { ($0.target.stream, $0.target.candidate.userID, $0.target.candidate.deviceID) }
        }
        if !reopened.isEmpty {
            claimed += try connection.query("""
                UPDATE countdown_start_ledger AS l
                SET status = t.status, reason = t.reason, token_hash = t.token_hash, updated_at = now(),
                    claimed_by = CASE WHEN t.status = 'sending' THEN $7 END,
                    claimed_until = CASE WHEN t.status = 'sending' THEN now() + make_interval(secs => $8) END,
                    attempts = l.attempts + CASE WHEN t.status = 'sending' THEN 1 ELSE 0 END
                FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
                    AS t(stream_id, user_id, device_id, status, reason, token_hash)
                WHERE l.stream_id = t.stream_id AND l.user_id = t.user_id AND l.device_id = t.device_id
                  AND (\(reopenCondition(new: "t")))
                RETURNING l.stream_id, l.user_id, l.device_id, l.status
                """, writeParameters(reopened, claim: claim)).compactMap(claimedRow)
        }
        return RecordedTargets(claimed: claimed, foundEarlierRows: !recorded.isEmpty)
    }

    /// What `recordTargets` did.
    public struct RecordedTargets: Sendable {
        /// The rows it wrote already claimed, in key order.
        public var claimed: [(stream: String, user: String, device: String)]
        /// Whether the scope had ledger rows before (always true after a race): when not, every open row of the
        /// scope is one this call wrote.
        public var foundEarlierRows: Bool
    }

    /// A target as it is written: its status (`sending` when claimed on insert) and token hash.
    private struct Written {
        var target: Target
        var tokenHash: String?
        var status = "pending"
        /// The row is in the ledger already and is written over.
        var reopens = false
    }

    private struct Key: Hashable {
        var stream: String
        var user: String
        var device: String

        init(stream: String, user: String, device: String) {
            (self.stream, self.user, self.device) = (stream, user, device)
        }

        init(_ target: Target) {
            self.init(stream: target.stream, user: target.candidate.userID, device: target.candidate.deviceID)
        }
    }

    /// Which rows a write may change, `StartLedgerMachine.reopens` in SQL: skipped rows (unless nothing would change),
    /// and dead-token failures that an eligible device with other tokens reopens. `new` names the written values.
    private static func reopenCondition(new t: String) -> String {
        """
        (l.status = 'skipped' AND (\(t).status, \(t).reason, \(t).token_hash) IS DISTINCT FROM (l.status, l.reason, l.token_hash))
                       OR (l.status = 'failed' AND l.reason LIKE 'dead_token:%'
                           AND \(t).status <> 'skipped' AND l.token_hash IS DISTINCT FROM \(t).token_hash)
        """
    }

    /// The scope's rows of `streams` already in the ledger, by key.
    private static func recordedRows(_ streams: [String], scope: FanoutScope, on connection: PostgresConnection) throws -> [Key: StartLedgerMachine.Row] {
        var sql = "SELECT stream_id, user_id, device_id, status, reason, token_hash FROM countdown_start_ledger WHERE stream_id = ANY($1::text[])"
        var parameters: [any PostgresEncodable] = [PostgresTextArray(streams)]
        narrow(&sql, &parameters, to: scope, device: "device_id", user: "user_id")
        var recorded: [Key: StartLedgerMachine.Row] = [:]
        for row in try connection.query(sql, parameters) {
            recorded[Key(stream: try row.decode("stream_id"), user: try row.decode("user_id"), device: try row.decode("device_id"))] =
                StartLedgerMachine.Row(status: try status(row), reason: try row.decode("reason"), tokenHash: try row.decode("token_hash"))
        }
        return recorded
    }

    /// A row's `status`, which the schema's check constraint keeps to the machine's statuses.
    private static func status(_ row: PostgresRow) throws -> StartLedgerMachine.Status {
        let text = try row.decode("status", as: String.self)
        guard let status = StartLedgerMachine.Status(rawValue: text) else {
            throw PostgresError(code: .decodeFailed, what: "decode column 'status'", message: "not a start ledger status: \(text)")
        }
        return status
    }

    /// Adds the scope's condition (one device or one user, as parameter 2) to a query of whole streams.
    private static func narrow(_ sql: inout String, _ parameters: inout [any PostgresEncodable], to scope: FanoutScope,
                               device: String, user: String) {
        switch scope {
        case .stream: break
        case .device(let id):
            sql += " AND \(device) = $2"
            parameters.append(id)
        case .user(let id):
            sql += " AND \(user) = $2"
            parameters.append(id)
        }
    }

    /// Gives the first `limit` eligible rows (in key order) the status `sending`, the other eligible rows `pending`.
    private static func claiming(_ rows: [Written], limit: Int) -> [Written] {
        var claimable = max(0, limit)
        return rows.map { row in
            var row = row
            if row.target.skip != nil {
                row.status = "skipped"
            } else if claimable > 0 {
                claimable -= 1
                row.status = "sending"
            }
            return row
        }
    }

    private static func writeParameters(_ rows: [Written], claim: InsertClaim) -> [(any PostgresEncodable)?] {
        [
            PostgresTextArray(rows.map(\.target.stream)),
            PostgresTextArray(rows.map(\.target.candidate.userID)),
            PostgresTextArray(rows.map(\.target.candidate.deviceID)),
            PostgresTextArray(rows.map(\.status)),
            PostgresTextArray(rows.map { $0.target.skip?.rawValue }),
            PostgresTextArray(rows.map(\.tokenHash)),
            claim.owner, claim.seconds,
        ]
    }

    private static func claimedRow(_ row: PostgresRow) throws -> (stream: String, user: String, device: String)? {
        guard try row.decode("status", as: String.self) == "sending" else { return nil }
        return (try row.decode("stream_id", as: String.self), try row.decode("user_id", as: String.self), try row.decode("device_id", as: String.self))
    }

    /// Inserts the rows of `writeParameters` (the ledger aliased `l`), claimed where their status is `sending`.
    private static let insertRows = """
        INSERT INTO countdown_start_ledger AS l
            (stream_id, user_id, device_id, status, reason, token_hash, claimed_by, claimed_until, attempts)
        SELECT t.stream_id, t.user_id, t.device_id, t.status, t.reason, t.token_hash,
               CASE WHEN t.status = 'sending' THEN $7 END,
               CASE WHEN t.status = 'sending' THEN now() + make_interval(secs => $8) END,
               CASE WHEN t.status = 'sending' THEN 1 ELSE 0 END
        FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[])
            AS t(stream_id, user_id, device_id, status, reason, token_hash)
        """

    /// Writes every row with `INSERT … ON CONFLICT`, reopening conflicting rows by `reopenCondition`.
    private static func upsert(_ rows: [Written], claim: InsertClaim, on connection: PostgresConnection) throws
        -> [(stream: String, user: String, device: String)] {
        try connection.query(insertRows + """

            ON CONFLICT (stream_id, user_id, device_id) DO UPDATE
                SET status = EXCLUDED.status, reason = EXCLUDED.reason, token_hash = EXCLUDED.token_hash, updated_at = now(),
                    claimed_by = EXCLUDED.claimed_by, claimed_until = EXCLUDED.claimed_until, attempts = l.attempts + EXCLUDED.attempts
                WHERE \(reopenCondition(new: "EXCLUDED"))
            RETURNING l.stream_id, l.user_id, l.device_id, l.status
            """, writeParameters(rows, claim: claim)).compactMap(claimedRow)
    }

    /// Takes up to `limit` of the scope's pending rows for `owner`, in key order, and rows being sent whose owner
    /// is among `owners.dead` (its heartbeat is gone), or whose claim expired and whose owner is not among
    /// `owners.alive` (a living worker keeps its claims even while it cannot extend them).
    public static func claim(_ streams: [String], scope: FanoutScope, seconds: Int, owner: String? = nil,
                             owners: (dead: [String], alive: [String]) = ([], []), limit: Int = 1_000_000,
                             on connection: PostgresConnection) throws -> [(stream: String, user: String, device: String)] {
        var filter = ""
        var parameters: [(any PostgresEncodable)?] = [PostgresTextArray(streams), seconds, owner, PostgresTextArray(owners.dead), limit,
                                                      PostgresTextArray(owners.alive)]
        switch scope {
        case .stream: break
        case .device(let device):
            filter = " AND device_id = $7"
            parameters.append(device)
        case .user(let user):
            filter = " AND user_id = $7"
            parameters.append(user)
        }
        return try connection.query("""
            UPDATE countdown_start_ledger l
            SET status = 'sending', claimed_until = now() + make_interval(secs => $2), claimed_by = $3,
                attempts = l.attempts + 1, updated_at = now()
            FROM (SELECT stream_id, user_id, device_id FROM countdown_start_ledger
                  WHERE stream_id = ANY($1::text[])
                    AND (status = 'pending' OR (status = 'sending' AND (claimed_by = ANY($4::text[])
                         OR (claimed_until < now() AND (claimed_by = ANY($6::text[])) IS NOT TRUE))))\(filter)
                  ORDER BY stream_id, user_id, device_id LIMIT $5
                  FOR UPDATE SKIP LOCKED) AS c
            WHERE l.stream_id = c.stream_id AND l.user_id = c.user_id AND l.device_id = c.device_id
            RETURNING l.stream_id, l.user_id, l.device_id
            """, parameters).map {
            (try $0.decode("stream_id", as: String.self), try $0.decode("user_id", as: String.self), try $0.decode("device_id", as: String.self))
        }
    }

    /// The workers (other than `except`) holding rows of `streams` being sent, and which of `streams` have ledger
    /// rows at all, in one read: the claim asks which owners are alive before it runs, and `recordTargets` need not
    /// read again the rows of a stream that had none (`withoutRows`).
    public static func ledgerOwners(_ streams: [String], except: String?, on connection: PostgresConnection) throws
        -> (owners: [String], streamsWithRows: Set<String>) {
        var owners = Set<String>()
        var streamsWithRows = Set<String>()
        for row in try connection.query("""
            SELECT DISTINCT stream_id,
                   CASE WHEN status = 'sending' AND claimed_by IS DISTINCT FROM $2 THEN claimed_by END AS owner
            FROM countdown_start_ledger WHERE stream_id = ANY($1::text[])
            """, [PostgresTextArray(streams), except]) {
            streamsWithRows.insert(try row.decode("stream_id", as: String.self))
            if let owner = try row.decode("owner", as: String?.self) { owners.insert(owner) }
        }
        return (owners.sorted(), streamsWithRows)
    }

    /// Rows currently claimed (ours included) per stream: unexpired claims and claims of `owners.alive`, not those
    /// of `owners.dead`.
    public static func openClaims(_ streams: [String], owners: (dead: [String], alive: [String]) = ([], []),
                                  on connection: PostgresConnection) throws -> [String: Int] {
        var open: [String: Int] = [:]
        for row in try connection.query("""
            SELECT stream_id, count(*) AS open FROM countdown_start_ledger
            WHERE stream_id = ANY($1::text[]) AND status = 'sending'
              AND (claimed_until > now() OR claimed_by = ANY($3::text[])) AND (claimed_by = ANY($2::text[])) IS NOT TRUE
            GROUP BY stream_id
            """, [PostgresTextArray(streams), PostgresTextArray(owners.dead), PostgresTextArray(owners.alive)]) {
            open[try row.decode("stream_id")] = try row.decode("open", as: Int.self)
        }
        return open
    }

    /// Streams among `streams` with ledger rows still pending or being sent.
    public static func streamsWithOpenRows(_ streams: [String], on connection: PostgresConnection) throws -> Set<String> {
        var open = Set<String>()
        for row in try connection.query("""
            SELECT DISTINCT stream_id FROM countdown_start_ledger
            WHERE stream_id = ANY($1::text[]) AND status IN ('pending', 'sending')
            """, [PostgresTextArray(streams)]) {
            open.insert(try row.decode("stream_id", as: String.self))
        }
        return open
    }

    /// Writes push outcomes back to their rows, one statement for all.
    public static func settle(_ unordered: [LedgerSettlement], on connection: PostgresConnection) throws {
        guard !unordered.isEmpty else { return }
        // In key order, as every writer of ledger rows locks them, so two fan-outs cannot deadlock.
        let settlements = unordered.sorted { ($0.stream, $0.user, $0.device) < ($1.stream, $1.user, $1.device) }
        // Each row is found by its primary key. Planned for a batch's real size (the first executions of the
        // prepared statement on a session, or every one when statements are not prepared), a few hundred rows
        // make the planner hash the whole ledger instead (a sequential scan of every stream's rows); so hash and
        // merge joins are off for this statement only, and the session's settings are put back after it.
        let previous = try connection.query("""
            SELECT s.hash, s.merge, set_config('enable_hashjoin', 'off', true) AS h, set_config('enable_mergejoin', 'off', true) AS m
            FROM (SELECT current_setting('enable_hashjoin') AS hash, current_setting('enable_mergejoin') AS merge OFFSET 0) AS s
            """).first
        try connection.execute("""
            UPDATE countdown_start_ledger l
            SET status = t.status, reason = t.reason, message_name = coalesce(t.name, l.message_name),
                claimed_until = NULL, updated_at = now(),
                sent_at = CASE WHEN t.status = 'sent' THEN now() ELSE l.sent_at END,
                token_hash = coalesce(t.token_hash, l.token_hash)
            FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
                AS t(stream_id, user_id, device_id, status, reason, name, token_hash)
            WHERE l.stream_id = t.stream_id AND l.user_id = t.user_id AND l.device_id = t.device_id
            """, [
                PostgresTextArray(settlements.map(\.stream)),
                PostgresTextArray(settlements.map(\.user)),
                PostgresTextArray(settlements.map(\.device)),
                PostgresTextArray(settlements.map(\.status)),
                PostgresTextArray(settlements.map(\.reason)),
                PostgresTextArray(settlements.map(\.name)),
                PostgresTextArray(settlements.map(\.tokenHash)),
            ])
        if let previous {
            try connection.execute("SELECT set_config('enable_hashjoin', $1, true), set_config('enable_mergejoin', $2, true)",
                                   [try previous.decode("hash", as: String.self), try previous.decode("merge", as: String.self)])
        }
    }
}
