import { describe, expect, it } from 'vitest';
import { abaRoutingValid, ibanValid, luhnValid } from './checksums.ts';

describe('checksums', () => {
  it('Luhn accepts the schemes’ test numbers and refuses a changed digit', () => {
    for (const n of [
      '4111111111111111',
      '5500000000000004',
      '378282246310005',
      '6011111111111117',
      '79927398713',
    ])
      expect(luhnValid(n)).toBe(true);
    for (const n of ['4111111111111112', '5500000000000005', '79927398710', '12a4'])
      expect(luhnValid(n)).toBe(false);
  });

  it('IBAN needs a known country, its length and mod-97 = 1', () => {
    for (const n of [
      'GB82WEST12345698765432',
      'DE89370400440532013000',
      'FR1420041010050500013M02606',
      'NL91ABNA0417164300',
    ])
      expect(ibanValid(n)).toBe(true);
    expect(ibanValid('GB82WEST12345698765433')).toBe(false); // checksum
    expect(ibanValid('GB82WEST1234569876543')).toBe(false); // length
    expect(ibanValid('XX82WEST12345698765432')).toBe(false); // country
    expect(ibanValid('gb82west12345698765432')).toBe(false); // lower case is not read
  });

  it('ABA routing numbers carry a 3-7-1 check digit', () => {
    for (const n of ['021000021', '011000015', '122105155']) expect(abaRoutingValid(n)).toBe(true);
    for (const n of ['021000022', '123456789', '000000000', '02100002'])
      expect(abaRoutingValid(n)).toBe(false);
  });
});
