import Foundation
import Postgres
import Testing

@Suite struct TypeRoundTripTests {
    static let text = "plain, 👩‍👩‍👧‍👦 emoji, e\u{301} combining, مرحبا بالعالم, שלום, quotes ' \" \\ and\nlines\t"
    static let bytes: [UInt8] = [0, 1, 0, 255, 0, 0x5C, 0x78, 0]

    @Test func everySupportedTypeSurvivesAColumnRoundTrip() async throws {
        try await withTestClient { client, _ in
            try await client.execute("""
                CREATE TABLE everything (
                    id int PRIMARY KEY, s text, i int8, i32 int4, i64 int8, b bool, d float8,
                    ts timestamptz, tsl timestamp, raw bytea, u uuid)
                """)
            let when = date(microseconds: 1_893_456_000_123_457)
            let uuid = UUID()
            let inserted = try await client.execute(
                "INSERT INTO everything VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                [1, Self.text, Int.min, Int32.min, Int64.max, true, -1.5e-300, when, when, Data(Self.bytes), uuid]
            )
            #expect(inserted == 1)
            try await client.execute(
                "INSERT INTO everything VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
                [2, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil]
            )
            let rows = try await client.query("SELECT * FROM everything ORDER BY id")
            #expect(rows.count == 2)
            let full = try #require(rows.first)
            #expect(try Array(full.decode("s", as: String.self).utf8) == Array(Self.text.utf8))
            #expect(try full.decode("i", as: Int.self) == Int.min)
            #expect(try full.decode("i32", as: Int32.self) == Int32.min)
            #expect(try full.decode("i64", as: Int64.self) == Int64.max)
            #expect(try full.decode("b", as: Bool.self) == true)
            #expect(try full.decode("d", as: Double.self) == -1.5e-300)
            #expect(try microseconds(full.decode("ts", as: Date.self)) == 1_893_456_000_123_457)
            #expect(try microseconds(full.decode("tsl", as: Date.self)) == 1_893_456_000_123_457)
            #expect(try full.decode("raw", as: Data.self) == Data(Self.bytes))
            #expect(try full.decode("raw", as: [UInt8].self) == Self.bytes)
            #expect(try full.decode("u", as: UUID.self) == uuid)
            #expect(try full.decode(0, as: Int.self) == 1)

            let empty = rows[1]
            #expect(try empty.decode("s", as: String?.self) == nil)
            #expect(try empty.decode("i", as: Int?.self) == nil)
            #expect(try empty.decode("i32", as: Int32?.self) == nil)
            #expect(try empty.decode("i64", as: Int64?.self) == nil)
            #expect(try empty.decode("b", as: Bool?.self) == nil)
            #expect(try empty.decode("d", as: Double?.self) == nil)
            #expect(try empty.decode("ts", as: Date?.self) == nil)
            #expect(try empty.decode("raw", as: Data?.self) == nil)
            #expect(try empty.decode("u", as: UUID?.self) == nil)
            #expect(try full.decode("i", as: Int?.self) == Int.min)
        }
    }

    @Test func serverSeesTheExactBytesSent() async throws {
        try await withTestClient { client, _ in
            let row = try #require(try await client.query(
                "SELECT octet_length($1::text) AS text_bytes, length($2::bytea) AS raw_bytes, $2::bytea = '\\x000100ff005c7800'::bytea AS same",
                [Self.text, Self.bytes]
            ).first)
            #expect(try row.decode("text_bytes", as: Int.self) == Self.text.utf8.count)
            #expect(try row.decode("raw_bytes", as: Int.self) == Self.bytes.count)
            #expect(try row.decode("same", as: Bool.self))
        }
    }

    @Test func parametersTypedByTheirSwiftType() async throws {
        try await withTestClient { client, _ in
            let row = try #require(try await client.query(
                "SELECT $1 AS i, $2 AS b, $3 AS f, $4 AS nan, $5 AS inf, $6 AS ninf, pg_typeof($1)::text AS it, pg_typeof($7)::text AS dt",
                [42, false, 0.1, Double.nan, Double.infinity, -Double.infinity, Date()]
            ).first)
            #expect(try row.decode("i", as: Int.self) == 42)
            #expect(try row.decode("b", as: Bool.self) == false)
            #expect(try row.decode("f", as: Double.self) == 0.1)
            #expect(try row.decode("nan", as: Double.self).isNaN)
            #expect(try row.decode("inf", as: Double.self) == .infinity)
            #expect(try row.decode("ninf", as: Double.self) == -.infinity)
            #expect(try row.decode("it", as: String.self) == "bigint")
            #expect(try row.decode("dt", as: String.self) == "timestamp with time zone")
        }
    }

    @Test func parametersThatLookLikeSQLAreStoredVerbatim() async throws {
        try await withTestClient { client, _ in
            try await client.execute("CREATE TABLE notes (id serial PRIMARY KEY, body text NOT NULL)")
            let hostile = [
                "'); DROP TABLE notes; --",
                "Robert'); DROP TABLE students;--",
                "$1 OR 1=1",
                "\\'; SELECT pg_sleep(10); --",
                "' OR ''='",
            ]
            for body in hostile {
                try await client.execute("INSERT INTO notes (body) VALUES ($1)", [body])
            }
            let stored = try await client.query("SELECT body FROM notes ORDER BY id").map { try $0.decode("body", as: String.self) }
            #expect(stored == hostile)
            let matches = try await client.query("SELECT count(*) AS n FROM notes WHERE body = $1", ["' OR ''='"])
            #expect(try matches.first?.decode("n", as: Int.self) == 1)
        }
    }

    @Test func decodingErrorsNameTheColumn() async throws {
        try await withTestClient { client, _ in
            let row = try #require(try await client.query("SELECT NULL::int AS missing, 'abc' AS word").first)
            let null = try #require(throws: PostgresError.self) { try row.decode("missing", as: Int.self) }
            #expect(null.code == .decodeFailed)
            #expect(null.message?.contains("'missing'") == true)
            let wrong = try #require(throws: PostgresError.self) { try row.decode("word", as: Int.self) }
            #expect(wrong.code == .decodeFailed)
            #expect(wrong.message?.contains("'word'") == true)
            let absent = try #require(throws: PostgresError.self) { try row.decode("nope", as: String.self) }
            #expect(absent.message?.contains("missing, word") == true)
            #expect(throws: PostgresError.self) { try row.decode(5, as: String.self) }
        }
    }

    @Test func stringsWithNULAreRejectedBeforeSending() async throws {
        try await withTestClient { client, _ in
            let error = await #expect(throws: PostgresError.self) {
                try await client.execute("SELECT $1", ["a\u{0}b"])
            }
            #expect(error?.code == .invalidParameter)
            #expect(error?.message?.contains("$1") == true)
        }
    }
}
