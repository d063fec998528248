import CivilTime
import Testing

@Suite struct CivilDateTests {
    @Test func knownDaysAndTheirDates() {
        let cases: [(Int64, CivilDate)] = [
            (0, CivilDate(year: 1970, month: 1, day: 1)),
            (-1, CivilDate(year: 1969, month: 12, day: 31)),
            (11_016, CivilDate(year: 2000, month: 2, day: 29)),
            (20_454, CivilDate(year: 2026, month: 1, day: 1)),
            (-719_468, CivilDate(year: 0, month: 3, day: 1)),
            (2_932_896, CivilDate(year: 9999, month: 12, day: 31)),
        ]
        for (days, date) in cases {
            #expect(CivilDate(daysSinceEpoch: days) == date, "\(days)")
            #expect(date.daysSinceEpoch == days, "\(date)")
        }
    }

    @Test func everyDayOfFourCenturiesRoundTripsAndFollowsTheDayBefore() {
        var previous = CivilDate(daysSinceEpoch: -146_098)
        for days in Int64(-146_097)...146_097 {
            let date = CivilDate(daysSinceEpoch: days)
            #expect(date.daysSinceEpoch == days)
            let next = previous.day + 1 == date.day && previous.month == date.month
                || date.day == 1 && (previous.month + 1 == date.month || previous.month == 12 && date.month == 1 && previous.year + 1 == date.year)
            if !next { Issue.record("\(previous) is not the day before \(date)"); return }
            previous = date
        }
    }

    @Test func floorDivisionRoundsDown() {
        #expect(CivilDate.floorDivide(7, 2) == 3)
        #expect(CivilDate.floorDivide(-7, 2) == -4)
        #expect(CivilDate.floorDivide(-8, 2) == -4)
        #expect(CivilDate(year: 7, month: 3, day: 9).description == "0007-03-09")
    }
}
