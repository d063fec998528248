import CountdownDomain
import Postgres

/// What a fan-out records: every device it considered, eligible or skipped, and the first page claimed on the spot.
extension StartLedger {
    /// A device a fan-out considered, with the reason it gets no push (nil: eligible).
    public struct Target: Sendable {
        public var stream: String
        public var candidate: DeviceCandidate
        public var skip: StartSkipReason?
        /// `TokenHash.of` the candidate's tokens: written with the row, and with its push's outcome (`Settlement`).
        public let tokenHash: String

        public init(stream: String, candidate: DeviceCandidate, skip: StartSkipReason?) {
            self.stream = stream
            self.candidate = candidate
            self.skip = skip
            tokenHash = TokenHash.of(fcm: candidate.fcmToken, pts: candidate.pushToStartToken)
        }

        public var key: Key { Key(stream: stream, user: candidate.userID, device: candidate.deviceID) }
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
        var parameters: [(any PostgresEncodable)?] = [PostgresTextArray(streams)]
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
        let sorted = targets.sorted { $0.key < $1.key }
        guard !sorted.isEmpty else { return RecordedTargets(claimed: [], foundEarlierRows: false) }
        let written = sorted.map { Written(target: $0) }
        if racing {
            let rows = claiming(written, limit: claim.limit)
            try check(.record, writing: rows.map(\.status))
            return RecordedTargets(claimed: try upsert(rows, claim: claim, on: connection), foundEarlierRows: true)
        }
        let unread = Set(sorted.map(\.stream)).subtracting(withoutRows)
        let recorded = unread.isEmpty ? [:] : try recordedRows(Array(unread), scope: scope, on: connection)
        let writable = written.compactMap { row -> Written? in
            guard let existing = recorded[row.target.key] else { return row }
            var row = row
            row.reopens = true
            return StartLedgerMachine.reopens(existing, skip: row.target.skip, tokenHash: row.target.tokenHash) ? row : nil
        }
        let rows = claiming(writable, limit: claim.limit)
        let fresh = rows.filter { !$0.reopens }
        let reopened = rows.filter(\.reopens)
        try check(.record, writing: fresh.map(\.status))
        try check(.reopen, writing: reopened.map(\.status))
        var claimed: [Claim] = []
        if !fresh.isEmpty {
            do {
                try connection.execute(insertRows, writeParameters(fresh, claim: claim))
            } catch let error as PostgresError where error.isUniqueViolation {
                throw StoreError(.raced, context: "start ledger rows of \(Set(fresh.map(\.target.stream)).count) streams")
            }
            // A new row is the first generation.
            claimed = fresh.filter { $0.status == .sending }.map { Claim($0.target.key, generation: 1) }
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
                RETURNING l.stream_id, l.user_id, l.device_id, l.status, l.generation
                """, writeParameters(reopened, claim: claim) + [from(.reopen)]).compactMap(claimedRow)
        }
        return RecordedTargets(claimed: claimed, foundEarlierRows: !recorded.isEmpty)
    }

    /// What `recordTargets` did.
    public struct RecordedTargets: Sendable {
        /// The rows it wrote already claimed, in key order.
        public var claimed: [Claim]
        /// Whether the scope had ledger rows before (always true after a race): when not, every open row of the
        /// scope is one this call wrote.
        public var foundEarlierRows: Bool
    }

    /// A target as it is written: its status (`sending` when claimed on insert).
    private struct Written {
        var target: Target
        var status = Status.pending
        /// The row is in the ledger already and is written over.
        var reopens = false
    }

    /// Which rows a write may change, `StartLedgerMachine.reopens` in SQL: rows in the statuses a reopen starts from
    /// (`$9`), skipped (unless nothing would change) or dead-token failures that an eligible device with other tokens
    /// reopens. `new` names the written values.
    private static func reopenCondition(new t: String) -> String {
        """
        l.status = ANY($9::text[]) AND ((l.status = 'skipped' AND (\(t).status, \(t).reason, \(t).token_hash) IS DISTINCT FROM (l.status, l.reason, l.token_hash))
                       OR (l.status = 'failed' AND l.reason LIKE 'dead_token:%'
                           AND \(t).status <> 'skipped' AND l.token_hash IS DISTINCT FROM \(t).token_hash))
        """
    }

    /// The scope's rows of `streams` already in the ledger, by key.
    private static func recordedRows(_ streams: [String], scope: FanoutScope, on connection: PostgresConnection) throws -> [Key: StartLedgerMachine.Row] {
        var sql = "SELECT stream_id, user_id, device_id, status, reason, token_hash FROM countdown_start_ledger WHERE stream_id = ANY($1::text[])"
        var parameters: [(any PostgresEncodable)?] = [PostgresTextArray(streams)]
        narrow(&sql, &parameters, to: scope, device: "device_id", user: "user_id")
        return Dictionary(uniqueKeysWithValues: try connection.query(sql, parameters).map { row in
            (try key(row), StartLedgerMachine.Row(status: try status(row), reason: try row.decode("reason"), tokenHash: try row.decode("token_hash")))
        })
    }

    /// Gives the first `limit` eligible rows (in key order) the status `sending`, the other eligible rows `pending`.
    private static func claiming(_ rows: [Written], limit: Int) -> [Written] {
        var claimable = max(0, limit)
        return rows.map { row in
            var row = row
            if row.target.skip != nil {
                row.status = .skipped
            } else if claimable > 0 {
                claimable -= 1
                row.status = .sending
            }
            return row
        }
    }

    private static func writeParameters(_ rows: [Written], claim: InsertClaim) -> [(any PostgresEncodable)?] {
        [
            PostgresTextArray(rows.map(\.target.stream)),
            PostgresTextArray(rows.map(\.target.candidate.userID)),
            PostgresTextArray(rows.map(\.target.candidate.deviceID)),
            PostgresTextArray(rows.map(\.status.rawValue)),
            PostgresTextArray(rows.map { $0.target.skip?.rawValue }),
            PostgresTextArray(rows.map(\.target.tokenHash)),
            claim.owner, claim.seconds,
        ]
    }

    private static func claimedRow(_ row: PostgresRow) throws -> Claim? {
        try status(row) == .sending ? try claimed(row) : nil
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
    private static func upsert(_ rows: [Written], claim: InsertClaim, on connection: PostgresConnection) throws -> [Claim] {
        try connection.query(insertRows + """

            ON CONFLICT (stream_id, user_id, device_id) DO UPDATE
                SET status = EXCLUDED.status, reason = EXCLUDED.reason, token_hash = EXCLUDED.token_hash, updated_at = now(),
                    claimed_by = EXCLUDED.claimed_by, claimed_until = EXCLUDED.claimed_until, attempts = l.attempts + EXCLUDED.attempts
                WHERE \(reopenCondition(new: "EXCLUDED"))
            RETURNING l.stream_id, l.user_id, l.device_id, l.status, l.generation
            """, writeParameters(rows, claim: claim) + [from(.reopen)]).compactMap(claimedRow)
    }
}
