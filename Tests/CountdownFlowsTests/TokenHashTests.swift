import CountdownStore
import Postgres
import Testing

/// The worker hashes a push's tokens exactly as PostgreSQL's `md5()` did (and as the reconciler still does over
/// `devices`), so rows written before and after agree.
@Suite struct TokenHashTests {
    @Test func knownValues() {
        #expect(TokenHash.of(fcm: nil, pts: nil) == "853ae90f0351324bd73ea615e6487517")  // md5(":")
        #expect(TokenHash.of(fcm: "", pts: "") == TokenHash.of(fcm: nil, pts: nil), "a missing token hashes as an empty one")
    }

    @Test func isPostgresMD5OfBothTokensJoinedByAColon() async throws {
        var pairs: [(String?, String?)] = [
            (nil, nil), ("", ""), (nil, "pts"), ("fcm", nil), ("çğış", "🙂\u{301}"), ("a:b", ":"),
            ("dGhpcyBpcyBub3QgYSByZWFsIHRva2Vu:APA91bH" + String(repeating: "Zx9_-", count: 28), String(repeating: "80f1c2", count: 27)),
        ]
        // Every padding case: messages of 54 to 57, 118 to 121 bytes and longer ones span one, two or more blocks.
        for length in [0, 1, 53, 54, 55, 56, 57, 62, 63, 64, 65, 117, 118, 119, 120, 121, 127, 128, 129, 250, 1000] {
            pairs.append((String(repeating: "f", count: length), "p"))
        }
        try await MigratedDatabase.with(prefix: "tokenhash") { client in
            for (fcm, pts) in pairs {
                let expected = try await client.query("SELECT md5(coalesce($1::text, '') || ':' || coalesce($2::text, '')) AS h", [fcm, pts])
                    .first?.decode("h", as: String.self)
                #expect(TokenHash.of(fcm: fcm, pts: pts) == expected, "\(fcm ?? "nil") / \(pts ?? "nil")")
            }
        }
    }
}
