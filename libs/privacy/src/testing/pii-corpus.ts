import type { PiiCategory } from '@agent-platform/contracts';

/** One value of personal data and a sentence that carries it the way a customer would write it. */
export interface CorpusEntry {
  category: PiiCategory;
  /** Exactly the text the detector must replace. */
  value: string;
  sentence: string;
}

/**
 * A seeded personal-data corpus for the privacy gateway's tests: every category the default
 * config detects, several formats each, the checksummed ones valid (Luhn, IBAN mod-97, ABA). All
 * values are the well-known test or example values of their schemes (Visa 4111..., the IBAN
 * registry's examples, HMRC's and the SSA's published examples), never a real person's.
 */
export const PII_CORPUS: readonly CorpusEntry[] = [
  { category: 'policy_number', value: 'POL-123456', sentence: 'My policy is POL-123456.' },
  { category: 'policy_number', value: 'POL 98765432', sentence: 'The van is on POL 98765432 too.' },
  { category: 'policy_number', value: 'HX-2024-99812', sentence: 'Policy number: HX-2024-99812.' },
  { category: 'claim_number', value: 'CLM-2024-0042', sentence: 'This is about CLM-2024-0042.' },
  { category: 'claim_number', value: 'CLM778899', sentence: 'The old one was CLM778899.' },
  { category: 'claim_number', value: '55-778812', sentence: 'Claim reference 55-778812 was closed.' },
  { category: 'national_id', value: '123-45-6789', sentence: 'My SSN is 123-45-6789.' },
  { category: 'national_id', value: '078051120', sentence: 'Her social security number is 078051120.' },
  { category: 'national_id', value: 'AB123456C', sentence: 'NI number AB123456C.' },
  { category: 'national_id', value: 'CE 12 34 56 D', sentence: 'His is CE 12 34 56 D.' },
  {
    category: 'payment_card',
    value: '4111 1111 1111 1111',
    sentence: 'Charge card 4111 1111 1111 1111 please.',
  },
  {
    category: 'payment_card',
    value: '5500-0000-0000-0004',
    sentence: 'Or the Mastercard 5500-0000-0000-0004.',
  },
  { category: 'payment_card', value: '378282246310005', sentence: 'Amex 378282246310005 as a last resort.' },
  {
    category: 'bank_account',
    value: 'GB82 WEST 1234 5698 7654 32',
    sentence: 'Pay into GB82 WEST 1234 5698 7654 32.',
  },
  {
    category: 'bank_account',
    value: 'DE89370400440532013000',
    sentence: 'My German account is DE89370400440532013000.',
  },
  { category: 'bank_account', value: '021000021', sentence: 'US routing number 021000021,' },
  { category: 'bank_account', value: '000123456789', sentence: 'account number 000123456789.' },
  { category: 'bank_account', value: '12-34-56', sentence: 'UK sort code 12-34-56.' },
  { category: 'email', value: 'john.smith@example.com', sentence: 'Email john.smith@example.com' },
  {
    category: 'email',
    value: 'Maria.Garcia+claims@mail.example.co.uk',
    sentence: 'or Maria.Garcia+claims@mail.example.co.uk.',
  },
  { category: 'phone', value: '+44 20 7946 0958', sentence: 'Phone +44 20 7946 0958,' },
  { category: 'phone', value: '(415) 555-0132', sentence: 'my US number (415) 555-0132,' },
  { category: 'phone', value: '07700 900123', sentence: 'mobile 07700 900123,' },
  { category: 'phone', value: '4155550199', sentence: 'or call me on 4155550199.' },
  { category: 'date_of_birth', value: '14/03/1985', sentence: 'DOB: 14/03/1985.' },
  { category: 'date_of_birth', value: '2 July 1979', sentence: 'My wife was born on 2 July 1979.' },
  { category: 'date_of_birth', value: '1990-12-31', sentence: 'Date of birth 1990-12-31 for my son.' },
  {
    category: 'address',
    value: '221B Baker Street, London NW1 6XE',
    sentence: 'I live at 221B Baker Street, London NW1 6XE.',
  },
  {
    category: 'address',
    value: '1600 Pennsylvania Avenue NW, Washington, DC 20500',
    sentence: 'Send mail to 1600 Pennsylvania Avenue NW, Washington, DC 20500.',
  },
  { category: 'address', value: 'Hauptstraße 5', sentence: 'The car is parked at Hauptstraße 5 in Berlin.' },
  { category: 'address', value: 'SW1A 1AA', sentence: 'The garage is near SW1A 1AA.' },
];

/** Names, for a config that turns `person_name` on (the detector is off by default). */
export const NAME_CORPUS: readonly CorpusEntry[] = [
  { category: 'person_name', value: 'Priya Patel', sentence: 'My name is Priya Patel.' },
  { category: 'person_name', value: "Karen O'Brien", sentence: "Please call Karen O'Brien back." },
  { category: 'person_name', value: 'Mr. Nguyen', sentence: 'I spoke with Mr. Nguyen at your office.' },
];

/** The corpus as one customer message (a claim intake a model must never see in clear). */
export function corpusMessage(entries: readonly CorpusEntry[] = PII_CORPUS): string {
  return `Hello, I need help with a claim. ${entries.map((e) => e.sentence).join(' ')} Thanks!`;
}

/**
 * Every form of every value a leak check must not find: the value as written, and for numbers
 * their digits alone (a model provider that got `4111111111111111` got the card).
 */
export function corpusLeakForms(entries: readonly CorpusEntry[] = PII_CORPUS): string[] {
  const forms = new Set<string>();
  for (const { value } of entries) {
    forms.add(value);
    const digits = value.replace(/\D/g, '');
    if (digits.length >= 6 && digits.length / value.replace(/\s/g, '').length > 0.5) forms.add(digits);
  }
  return [...forms];
}

/** The leak forms found in `haystack` (expected: none). JSON bodies are searched as their text. */
export function leakedValues(haystack: string, entries: readonly CorpusEntry[] = PII_CORPUS): string[] {
  return corpusLeakForms(entries).filter(
    (form) => haystack.includes(form) || haystack.includes(JSON.stringify(form).slice(1, -1)),
  );
}
