import { DEFAULT_CLAIM_NUMBER_PATTERNS, DEFAULT_POLICY_NUMBER_PATTERNS } from '@agent-platform/contracts';
import { describe, expect, it } from 'vitest';
import type { Detector } from '../span.ts';
import { addressDetector } from './address.ts';
import { bankAccountDetector } from './bank-account.ts';
import { carrierNumberDetector, compileCarrierPattern } from './carrier-numbers.ts';
import { dateOfBirthDetector } from './date-of-birth.ts';
import { emailDetector } from './email.ts';
import { nationalIdDetector } from './national-id.ts';
import { paymentCardDetector } from './payment-card.ts';
import { phoneDetector } from './phone.ts';

/**
 * The values a detector finds in `text`, in text order. A detector's own patterns may overlap
 * (the prefix and the cue pattern of a policy number); like pii-detector.ts, the first and longest wins.
 */
const found = (detector: Detector, text: string): string[] => {
  const spans = detector.detect(text).sort((a, b) => a.start - b.start || b.end - a.end);
  const kept = spans.filter((s, i) => !spans.slice(0, i).some((t) => s.start < t.end && t.start < s.end));
  return kept.map((s) => text.slice(s.start, s.end));
};

/** Each positive case: the text, and exactly what must be found in it. Negatives: nothing found. */
function check(detector: Detector, positives: Array<[string, string[]]>, negatives: string[]): void {
  for (const [text, expected] of positives) expect(found(detector, text), text).toEqual(expected);
  for (const text of negatives) expect(found(detector, text), text).toEqual([]);
}

describe('detectors: positives and near misses', () => {
  it('email', () => {
    check(
      emailDetector,
      [
        ['write to john.smith@example.com today', ['john.smith@example.com']],
        ['Maria.Garcia+claims@mail.example.co.uk.', ['Maria.Garcia+claims@mail.example.co.uk']],
        ["o'neil@EXAMPLE.IE and a_b@c-d.org", ["o'neil@EXAMPLE.IE", 'a_b@c-d.org']],
      ],
      [
        'root@localhost',
        'john at example dot com',
        'user@example',
        '@handle',
        'a..b@example.com',
        'name@domain.c',
      ],
    );
  });

  it('phone', () => {
    check(
      phoneDetector,
      [
        ['Phone +44 20 7946 0958, thanks', ['+44 20 7946 0958']],
        ['my US number (415) 555-0132.', ['(415) 555-0132']],
        [
          '415-555-0132 or 415.555.0132 or 1-800-555-0199',
          ['415-555-0132', '415.555.0132', '1-800-555-0199'],
        ],
        ['mobile 07700 900123', ['07700 900123']],
        ['020 7946 0958', ['020 7946 0958']],
        ['+33612345678', ['+33612345678']],
        ['call me on 4155550199.', ['4155550199']],
        ['tel: 5550132', ['5550132']],
      ],
      [
        '555-0132',
        'invoice 4155550199',
        'on 2024-05-01',
        'paid 1,000,000 dollars',
        'version 10.0.0.1',
        '+12',
        'the 3 cars 12 days',
        'ref 0123',
      ],
    );
  });

  it('payment card (issuer prefix + Luhn)', () => {
    check(
      paymentCardDetector,
      [
        ['card 4111 1111 1111 1111 please', ['4111 1111 1111 1111']],
        ['5500-0000-0000-0004', ['5500-0000-0000-0004']],
        ['Amex 378282246310005', ['378282246310005']],
        ['4111111111111111 2024', ['4111111111111111']],
        ['6011 1111 1111 1117', ['6011 1111 1111 1117']],
      ],
      [
        '4111 1111 1111 1112', // Luhn fails
        '1234 5678 9012 3452', // Luhn-valid, no issuer starts with 1
        '4111 1111-1111 1111', // mixed separators: several numbers, not one card
        '378282246310005123', // Amex prefix, wrong length
        'order 41111111111111', // 14 digits, Visa has 13, 16, 19
      ],
    );
  });

  it('bank account (IBAN mod-97, ABA checksum, cues)', () => {
    check(
      bankAccountDetector,
      [
        ['Pay into GB82 WEST 1234 5698 7654 32 AB', ['GB82 WEST 1234 5698 7654 32']],
        ['IBAN DE89370400440532013000.', ['DE89370400440532013000']],
        ['routing number 021000021, account number 000123456789', ['021000021', '000123456789']],
        ['ABA: 011000015', ['011000015']],
        ['acct #12345678', ['12345678']],
        ['sort code 12-34-56', ['12-34-56']],
      ],
      [
        'GB82 WEST 1234 5698 7654 33', // checksum
        'DE89 3704 0044 0532 0130', // too short for DE
        'routing number 021000022', // ABA checksum
        'account 12345', // too few digits
        '021000021', // no cue
        'code 12-34-56',
      ],
    );
  });

  it('national id (SSN rules, NINO prefixes)', () => {
    check(
      nationalIdDetector,
      [
        ['My SSN is 123-45-6789.', ['123-45-6789']],
        ['ssn 123 45 6789', ['123 45 6789']],
        ['social security number is 078051120', ['078051120']],
        ['NI number AB123456C.', ['AB123456C']],
        ['His is CE 12 34 56 D', ['CE 12 34 56 D']],
      ],
      [
        '000-12-3456', // area 000
        '666-12-3456', // area 666
        '900-12-3456', // 9xx
        '123-00-4567', // group 00
        '123-45-0000', // serial 0000
        '123-45 6789', // mixed separators
        '123456789', // bare nine digits, no cue
        'QQ123456C', // Q is not a valid first letter (HMRC's example prefix)
        'GB123456A', // a reserved prefix
        'AB123456E', // suffix A-D only
      ],
    );
  });

  it('date of birth (a date after a birth cue)', () => {
    check(
      dateOfBirthDetector,
      [
        ['DOB: 14/03/1985.', ['14/03/1985']],
        ['born on 2 July 1979', ['2 July 1979']],
        ['Date of birth 1990-12-31 for my son', ['1990-12-31']],
        ['date of birth is March 14, 1985', ['March 14, 1985']],
        ['born on the 14th of March 1985', ['14th of March 1985']],
        ['D.O.B. 3-14-85', ['3-14-85']],
        ['birthday: 31.12.1990', ['31.12.1990']],
      ],
      [
        'the accident on 14/03/2024',
        'DOB: 32/13/1985',
        'born in 1985',
        'DOB unknown',
        'birthday party at 10:30',
        'date of birth 14/03/1985/7',
      ],
    );
  });

  it('address (street lines, continental forms, UK postcodes, PO boxes)', () => {
    check(
      addressDetector,
      [
        ['I live at 221B Baker Street, London NW1 6XE.', ['221B Baker Street, London NW1 6XE']],
        [
          'Send mail to 1600 Pennsylvania Avenue NW, Washington, DC 20500.',
          ['1600 Pennsylvania Avenue NW, Washington, DC 20500'],
        ],
        ['12 Oak Rd, Apt 4B', ['12 Oak Rd, Apt 4B']],
        ['at 742 Evergreen Terrace, Springfield, IL 62704', ['742 Evergreen Terrace, Springfield, IL 62704']],
        ['parked at Hauptstraße 5 in Berlin', ['Hauptstraße 5']],
        ['Keizersgracht 123', ['Keizersgracht 123']],
        ['12 rue de la Paix', ['12 rue de la Paix']],
        ['Via Roma 10', ['Via Roma 10']],
        ['near SW1A 1AA.', ['SW1A 1AA']],
        ['P.O. Box 1234', ['P.O. Box 1234']],
      ],
      [
        'I have 3 cats and 2 dogs',
        '12 baker street',
        'the 5 Main points',
        'Flat 3, The Maltings',
        'zip 62704',
        'room 101',
      ],
    );
  });

  it('policy and claim numbers: the default patterns', () => {
    const policy = carrierNumberDetector('policy_number', DEFAULT_POLICY_NUMBER_PATTERNS);
    const claim = carrierNumberDetector('claim_number', DEFAULT_CLAIM_NUMBER_PATTERNS);
    check(
      policy,
      [
        ['My policy is POL-123456.', ['POL-123456']],
        ['POL 98765432 covers the van', ['POL 98765432']],
        ['Policy number: HX-2024-99812.', ['HX-2024-99812']],
        ['policy no. 00451234', ['00451234']],
      ],
      ['my policy 2024 renewal', 'POL-12345', 'the policy covers floods', 'policyholder 12 of 300'],
    );
    check(
      claim,
      [
        ['This is about CLM-2024-0042.', ['CLM-2024-0042']],
        ['claim CLM778899', ['CLM778899']],
        ['Claim reference 55-778812 was closed', ['55-778812']],
        ['claim #1234567', ['1234567']],
      ],
      ['hold: claim 31', 'Claim 42 is approved', 'CLM-12', 'the claim was filed in 2024'],
    );
  });

  it('policy and claim numbers: a carrier’s own pattern, with a cue group left in the text', () => {
    const policy = carrierNumberDetector('policy_number', [
      String.raw`\bACM\d{2}[A-Z]{3}\d{4}\b`,
      String.raw`contract\s+(?<value>\d{8})`,
    ]);
    check(
      policy,
      [['ACM24ABC1234 and contract 12345678', ['ACM24ABC1234', '12345678']]],
      ['ACM24AB1234', 'contract 1234567'],
    );
  });

  it('refuses a carrier pattern that does not compile or matches nothing at all', () => {
    expect(() => compileCarrierPattern('(unclosed')).toThrow(SyntaxError);
    expect(() => compileCarrierPattern('\\d*')).toThrow(/empty string/);
  });
});
