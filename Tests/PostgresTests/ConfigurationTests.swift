import Foundation
import Postgres
import Testing

@Suite struct ConfigurationTests {
    @Test func parsesEveryPartOfTheURL() throws {
        let configuration = try PostgresConfiguration(url: "postgres://app:s%40cr%2Fet@db.example.com:6543/countdown")
        #expect(configuration.host == "db.example.com")
        #expect(configuration.port == 6543)
        #expect(configuration.user == "app")
        #expect(configuration.password == "s@cr/et")
        #expect(configuration.database == "countdown")
        #expect(configuration.connectTimeoutSeconds == 5)
        #expect(configuration.applicationName == "countdown")
        #expect(configuration.options.isEmpty)
    }

    @Test func acceptsPostgresqlSchemeDefaultsAndParameters() throws {
        let configuration = try PostgresConfiguration(
            url: "postgresql://app@127.0.0.1/db?connect_timeout=2&application_name=countdown-worker&sslmode=disable"
        )
        #expect(configuration.port == 5432)
        #expect(configuration.password == nil)
        #expect(configuration.connectTimeoutSeconds == 2)
        #expect(configuration.applicationName == "countdown-worker")
        #expect(configuration.options == ["sslmode": "disable"])
    }

    @Test func acceptsIPv6AndSocketDirectories() throws {
        #expect(try PostgresConfiguration(url: "postgres://app@[::1]:5433/db").host == "::1")
        let socket = try PostgresConfiguration(url: "postgres:///db?host=/var/run/postgresql")
        #expect(socket.host == "/var/run/postgresql")
        #expect(socket.database == "db")
    }

    @Test(arguments: [
        ("", "not a valid URL"),
        ("not a url at all", "not a valid URL"),
        ("mysql://app:secret@host/db", "scheme 'mysql' is not supported"),
        ("postgres://app:secret@/db", "host is missing"),
        ("postgres://app:secret@host:0/db", "out of range"),
        ("postgres://app:secret@host:70000/db", "out of range"),
        ("postgres://app:secret@host/db?bogus=1", "unknown connection parameter 'bogus'"),
        ("postgres://app:secret@host/db?connect_timeout=soon", "connect_timeout 'soon' is not a positive"),
        ("postgres://app:secret@host/db?connect_timeout=0", "is not a positive"),
        ("postgres://app:secret@host/db?password=other", "'password' is not allowed"),
        ("postgres://app:secret@host/db?sslmode", "'sslmode' has no value"),
        ("postgres://app:secret@host/one/two", "contains '/'"),
        ("postgres://:secret@host/db", "password is given without a user name"),
        ("postgres://app:secret@host/db?host=/tmp", "host is given twice"),
    ])
    func rejectsInvalidURLsClearlyWithoutThePassword(url: String, expected: String) {
        do {
            _ = try PostgresConfiguration(url: url)
            Issue.record("accepted \(url)")
        } catch let error as PostgresError {
            #expect(error.code == .invalidURL)
            #expect(error.message?.contains(expected) == true, "\(error)")
            #expect(!"\(error)".contains("secret"))
        } catch {
            Issue.record("unexpected \(error)")
        }
    }

    @Test func neverShowsFragmentsOfAMisencodedPassword() {
        for url in ["postgres://app:zq?xw=1@host/db", "postgres://app:zq/xw@host/db", "postgres://app:zq#xw@host/db"] {
            do {
                _ = try PostgresConfiguration(url: url)
                Issue.record("accepted \(url)")
            } catch {
                #expect(!"\(error)".contains("zq") && !"\(error)".contains("xw"), "\(error)")
            }
        }
    }

    @Test func descriptionsMaskThePassword() throws {
        let configuration = try PostgresConfiguration(url: "postgres://app:hunter2@host:5432/db?sslmode=require")
        #expect("\(configuration)" == "postgres://app:***@host:5432/db?sslmode=require")
        var dumped = ""
        dump(configuration, to: &dumped)
        #expect(!dumped.contains("hunter2"))
        #expect(!String(reflecting: configuration).contains("hunter2"))
    }
}
