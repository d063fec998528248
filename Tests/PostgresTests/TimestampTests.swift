import Foundation
import Testing

@testable import Postgres

@Suite struct TimestampTests {
    @Test(arguments: [
        ("2030-01-02 03:04:05.123456+00", 1_893_553_445_123_456 as Int64),
        ("2030-01-02 12:04:05.123456+09", 1_893_553_445_123_456),
        ("2030-01-01 21:34:05.123456-05:30", 1_893_553_445_123_456),
        ("2030-01-02T03:04:05.123456Z", 1_893_553_445_123_456),
        ("2030-01-02T03:04:05.123456+00:00", 1_893_553_445_123_456),
        ("2030-01-02 03:04:05.1234567", 1_893_553_445_123_456),
        ("2030-01-02 03:04:05.5", 1_893_553_445_500_000),
        ("2030-01-02 03:04:05", 1_893_553_445_000_000),
        ("2030-01-02", 1_893_542_400_000_000),
        ("1969-12-31 23:59:59.999999+00", -1),
        ("1900-03-01 00:00:00+00:09:21", -2_203_891_761_000_000),
        ("2024-02-29 00:00:00+0100", 1_709_161_200_000_000),
    ])
    func parsesServerTextForms(text: String, expected: Int64) throws {
        let parsed = try #require(PostgresTimestamp.parse(text))
        #expect(microseconds(parsed) == expected)
    }

    @Test(arguments: ["", "infinity", "-infinity", "2030-13-01", "2030-01-02 03", "0044-03-15 12:00:00 BC", "2030-01-02 3:04:05"])
    func rejectsWhatItCannotRepresent(text: String) {
        #expect(PostgresTimestamp.parse(text) == nil)
    }

    @Test func formatsISO8601WithMicrosecondsAndOffset() {
        #expect(PostgresTimestamp.format(date(microseconds: 1_893_553_445_123_456)) == "2030-01-02T03:04:05.123456+00:00")
        #expect(PostgresTimestamp.format(date(microseconds: -1)) == "1969-12-31T23:59:59.999999+00:00")
        #expect(PostgresTimestamp.format(date(microseconds: 0)) == "1970-01-01T00:00:00.000000+00:00")
        for micros: Int64 in [0, 1, 999_999, 951_782_400_000_001, 1_893_553_445_123_456, 4_102_444_799_999_999] {
            let text = PostgresTimestamp.format(date(microseconds: micros))
            #expect(PostgresTimestamp.parse(text).map(microseconds) == micros, "\(text)")
        }
    }

    @Test func decodingIsStableWhenTheServerTimeZoneIsNotUTC() async throws {
        try await withTestClient { client, database in
            try await database.administer { connection in
                try connection.execute("ALTER DATABASE \(try connection.quoteIdentifier(database.name)) SET timezone TO 'Asia/Tokyo'")
            }
            let settings = try #require(try await client.query(
                "SELECT current_setting('TimeZone') AS session, reset_val AS database FROM pg_settings WHERE name = 'TimeZone'"
            ).first)
            #expect(try settings.decode("session", as: String.self) == "UTC")
            #expect(try settings.decode("database", as: String.self) == "Asia/Tokyo")

            try await client.execute("CREATE TABLE moments (id int PRIMARY KEY, at timestamptz NOT NULL, local timestamp NOT NULL)")
            let when = date(microseconds: 1_893_553_445_123_456)  // 2030-01-02 03:04:05.123456 UTC
            try await client.execute("INSERT INTO moments VALUES (1, $1, $1)", [when])
            let row = try #require(try await client.query("""
                SELECT at, local, to_char(at AT TIME ZONE 'Asia/Tokyo', 'YYYY-MM-DD HH24:MI:SS.US') AS tokyo,
                       '2030-01-02 12:04:05.123456+09'::timestamptz AS literal
                FROM moments
                """).first)
            #expect(try microseconds(row.decode("at", as: Date.self)) == 1_893_553_445_123_456)
            #expect(try microseconds(row.decode("local", as: Date.self)) == 1_893_553_445_123_456)
            #expect(try microseconds(row.decode("literal", as: Date.self)) == 1_893_553_445_123_456)
            #expect(try row.decode("tokyo", as: String.self) == "2030-01-02 12:04:05.123456")
        }
    }
}
