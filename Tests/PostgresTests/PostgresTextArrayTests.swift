import Postgres
import TestSupport
import Testing

@Suite struct PostgresTextArrayTests {
    @Test func literalQuotesAndEscapes() {
        #expect(PostgresTextArray(["a", "b\"c", "d\\e", nil, ""]).postgresText == #"{"a","b\"c","d\\e",NULL,""}"#)
        #expect(PostgresTextArray([String]()).postgresText == "{}")
        #expect(PostgresTextArray(["\"\"x\\", "\\", "ş\"✨"]).postgresText == #"{"\"\"x\\","\\","ş\"✨"}"#)
    }

    @Test func roundTripsThroughTheServer() async throws {
        let database = try await TestDatabase.create()
        let client = PostgresClient(configuration: database.configuration, maxConnections: 1)
        let values: [String?] = ["plain", "with,comma", "quote\"s", "back\\slash", "{braces}", "NULL", nil, "ş ✨ עברית", "'; DROP TABLE x; --",
                                 "\"\"\\", "end\\"]
        let rows = try await client.query("SELECT v FROM unnest($1::text[]) WITH ORDINALITY AS t(v, n) ORDER BY n", [PostgresTextArray(values)])
        #expect(try rows.map { try $0.decode("v", as: String?.self) } == values)
        let numbers = try await client.query("SELECT sum(v) AS s FROM unnest($1::bigint[]) AS t(v)", [PostgresTextArray(["1", "2", "40"])])
        #expect(try numbers.first?.decode("s", as: Int.self) == 43)
        client.close()
        try await database.drop()
    }
}
