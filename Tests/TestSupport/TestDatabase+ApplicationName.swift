import Foundation

extension TestDatabase {
    /// The database's URL with `application_name` set: a worker started with it as `DATABASE_URL` is told apart in
    /// `pg_stat_activity` from the harness' own pooled connections.
    public func url(applicationName: String) throws -> String {
        guard var components = URLComponents(string: url) else { throw HarnessError("unreadable DATABASE_URL \(url)") }
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "application_name", value: applicationName)]
        guard let named = components.string else { throw HarnessError("cannot add application_name to \(url)") }
        return named
    }
}
