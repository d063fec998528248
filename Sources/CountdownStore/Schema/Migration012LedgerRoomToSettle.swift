extension Migration {
    /// New start-ledger pages are filled to 40 % (`fillfactor`, 70 since migration 11), so every row written on a
    /// page can be settled in place. A settlement writes the row's new version on the same page (a HOT update, no
    /// index entry) only while the page has room for it, and the old versions become free space only after the
    /// settling transaction commits; a settled row is about 40 % larger than a claimed one (the FCM message name).
    /// At 70 % a page held new versions for about half of its rows: in a 45,000-push burst 60 % of the settlements
    /// were HOT and the rest wrote a primary-key entry each. At 40 % all are, and the settle statement takes half
    /// the time.
    ///
    /// Only pages written from now on are affected (no rewrite; `SET (fillfactor)` takes a lock that lets reads and
    /// writes go on). A settled ledger takes about 1.7 times the space it took at 70 %.
    static let ledgerRoomToSettle = Migration(version: 12, name: "start ledger pages keep room to settle every row in place", sql: #"""
    ALTER TABLE countdown_start_ledger SET (fillfactor = 40);
    """#)
}
