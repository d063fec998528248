import Testing
import CountdownStore

/// The migration list itself: branches that each add a version meet in `Migration.all`, and a merge that lists one
/// twice or out of order would still migrate (applied versions are skipped) while hiding the mistake.
@Suite struct MigrationListTests {
    @Test func versionsAreUniqueAndListedOldestFirst() {
        let versions = Migration.all.map(\.version)
        #expect(Set(versions).count == versions.count, "a version listed twice: \(versions)")
        #expect(versions == versions.sorted(), "versions out of order: \(versions)")
        let names = Migration.all.map(\.name)
        #expect(Set(names).count == names.count, "a migration listed twice: \(names)")
    }
}
