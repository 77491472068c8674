import type { Detector } from '../span.ts';
import { matchSpans } from '../span.ts';

/**
 * Dates of birth: a date right after a birth cue (`DOB`, `D.O.B.`, `date of birth`, `birth date`,
 * `birthday`, `born`), within a few words (`DOB: 14/03/1985`, `born on the 14th of March 1985`,
 * `date of birth is 1985-03-14`). Dates: `14/03/1985`, `3-14-85`, `14.03.1985`, `1985-03-14`,
 * `14 March 1985`, `March 14, 1985`, `14th of Mar 1985`; day, month and year are range-checked.
 * Missed: a date with no cue before it (any date could be anything: `the accident on 14/03/2024` is
 * left alone, by design), a cue after the date (`14/03/1985 (DOB)`), a year alone (`born in 1985`),
 * and cues in languages other than English.
 */
const MONTH = String.raw`(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?`;
const ORDINAL = String.raw`(?:st|nd|rd|th)?`;
const DATE = [
  String.raw`\d{1,2}[/.-]\d{1,2}[/.-](?:\d{4}|\d{2})`,
  String.raw`\d{4}[/.-]\d{1,2}[/.-]\d{1,2}`,
  String.raw`\d{1,2}${ORDINAL}\s+(?:of\s+)?${MONTH},?\s+\d{4}`,
  String.raw`${MONTH}\s+\d{1,2}${ORDINAL},?\s+\d{4}`,
].join('|');
const CUE = String.raw`\b(?:DOB|D\.O\.B\.?|date\s+of\s+birth|birth\s*date|birthday|born)`;
/** The cue, up to 24 characters of no digits ("(is|was) on the"), then the date as `value`. */
const DOB = new RegExp(String.raw`${CUE}(?![A-Za-z])[^\d\n]{0,24}?(?<value>${DATE})(?![\d/.-]*\d)`, 'dgi');

export const dateOfBirthDetector: Detector = {
  category: 'date_of_birth',
  detect: (text) => matchSpans(DOB, text, plausibleDate),
};

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** Day 1-31, month 1-12 (either order for numeric dates: 03/14 and 14/03 are both read), year 1900-2099 or two digits. */
function plausibleDate(value: string): boolean {
  const numbers = (value.match(/\d+/g) ?? []).map(Number);
  const named = MONTHS.findIndex((m) => value.toLowerCase().includes(m));
  const year = numbers.find((n, i) => i === numbers.length - 1 || n > 31);
  const yearOk = (n: number | undefined) =>
    n !== undefined && ((n >= 1900 && n <= 2099) || (n < 100 && String(n).length <= 2));
  if (named >= 0) {
    const [day, y] = numbers;
    return day !== undefined && day >= 1 && day <= 31 && yearOk(y);
  }
  if (numbers.length !== 3) return false;
  const [a, b, c] = numbers as [number, number, number];
  if (a > 31) return yearOk(a) && b >= 1 && b <= 12 && c >= 1 && c <= 31;
  const dayMonth = (d: number, m: number) => d >= 1 && d <= 31 && m >= 1 && m <= 12;
  return (dayMonth(a, b) || dayMonth(b, a)) && year !== undefined && yearOk(c);
}
