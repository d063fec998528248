@testable import CountdownStore
import Postgres
import Testing
import TestSupport

/// The worker hashes a push's tokens exactly as PostgreSQL's `md5()` did (and as the reconciler still does over
/// `devices`), so rows written before and after agree.
@Suite struct TokenHashTests {
    @Test func knownValues() {
        #expect(TokenHash.of(fcm: nil, pts: nil) == "853ae90f0351324bd73ea615e6487517")  // md5(":")
        #expect(TokenHash.of(fcm: "", pts: "") == TokenHash.of(fcm: nil, pts: nil), "a missing token hashes as an empty one")
    }

    /// The test suite of RFC 1321 (the hash is computed in Swift, not by OpenSSL).
    @Test func rfc1321Vectors() {
        let vectors = [
            "": "d41d8cd98f00b204e9800998ecf8427e",
            "a": "0cc175b9c0f1b6a831c399e269772661",
            "abc": "900150983cd24fb0d6963f7d28e17f72",
            "message digest": "f96b697d7cb7938d525a2f31aaf161d0",
            "abcdefghijklmnopqrstuvwxyz": "c3fcd3d76192e4007dfb496cca67e13b",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789": "d174ab98d277d9f5a5611c2c9f419d9f",
            String(repeating: "1234567890", count: 8): "57edf4a22be3c955ac49da2e2107b67a",
        ]
        for (message, expected) in vectors {
            var text = message
            #expect(text.withUTF8 { TokenHash.md5Hex(UnsafeRawBufferPointer($0)) } == expected, "md5(\"\(message)\")")
        }
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
        try await StoreDatabase.with(prefix: "store_tokenhash") { client in
            for (fcm, pts) in pairs {
                let expected = try await client.query("SELECT md5(coalesce($1::text, '') || ':' || coalesce($2::text, '')) AS h", [fcm, pts])
                    .first?.decode("h", as: String.self)
                #expect(TokenHash.of(fcm: fcm, pts: pts) == expected, "\(fcm ?? "nil") / \(pts ?? "nil")")
            }
        }
    }

    /// Random token pairs (ASCII, PostgreSQL's array punctuation, the separator, two-, three- and four-byte UTF-8, a
    /// combining mark) whose joined message is 1 to 3, 54 to 57, 62 to 66, 118 to 122 or 127 to 129 bytes long (one
    /// or two padded blocks, a block boundary) or any length up to 300, hashed by PostgreSQL in one statement.
    @Test func randomTokensHashAsPostgresDoes() async throws {
        let seed = UInt64.random(in: 0...UInt64.max)
        var random = SeededGenerator(seed: seed)
        let scalars: [Unicode.Scalar] = ["a", "Z", "0", "-", "_", ":", "\"", "\\", "{", "}", ",", " ", "ç", "İ", "€", "中", "\u{301}", "🙂", "𝄞"]
        func text(bytes: Int) -> String {
            var result = String.UnicodeScalarView()
            var left = bytes
            while left > 0 {
                let fitting = scalars.filter { String($0).utf8.count <= left }
                let scalar = fitting[Int.random(in: 0..<fitting.count, using: &random)]
                result.append(scalar)
                left -= String(scalar).utf8.count
            }
            return String(result)
        }
        var lengths = [1, 2, 3, 54, 55, 56, 57, 62, 63, 64, 65, 66, 118, 119, 120, 121, 122, 127, 128, 129]
        lengths += (0..<60).map { _ in Int.random(in: 1...300, using: &random) }
        let pairs: [(fcm: String?, pts: String?)] = lengths.map { length in
            let split = Int.random(in: 0...(length - 1), using: &random)
            let fcm = text(bytes: split), pts = text(bytes: length - 1 - split)
            return (fcm.isEmpty && Bool.random(using: &random) ? nil : fcm, pts.isEmpty && Bool.random(using: &random) ? nil : pts)
        }
        try await StoreDatabase.with(prefix: "store_tokenhash_random") { client in
            let rows = try await client.query("""
                SELECT md5(m) AS h, octet_length(m) AS n
                FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS t(f, p, i), LATERAL (SELECT coalesce(f, '') || ':' || coalesce(p, '') AS m) AS joined
                ORDER BY i
                """, [PostgresTextArray(pairs.map(\.fcm)), PostgresTextArray(pairs.map(\.pts))])
            #expect(try rows.map { try $0.decode("n", as: Int.self) } == lengths, "seed \(seed): the messages have the lengths meant")
            for (pair, row) in zip(pairs, rows) {
                let expected = try row.decode("h", as: String.self)
                #expect(TokenHash.of(fcm: pair.fcm, pts: pair.pts) == expected, "seed \(seed): \(pair.fcm ?? "nil") / \(pair.pts ?? "nil")")
            }
        }
    }
}
