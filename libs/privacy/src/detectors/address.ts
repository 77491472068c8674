import type { Detector } from '../span.ts';
import { matchSpans } from '../span.ts';

/**
 * Postal addresses, from their most recognisable parts:
 * - an English street line: a house number, one to four capitalised words and a street type
 *   (`221B Baker Street`, `1600 Pennsylvania Ave NW`, `12 Oak Rd`), extended over a unit (`Apt 4B`,
 *   `Flat 2`) and, when what follows ends in a US state and ZIP code or a UK postcode, the town
 *   (`, Springfield, IL 62704`, `, London NW1 6XE`);
 * - German and Dutch street names with the number after (`Hauptstraße 5`, `Keizersgracht 123`),
 *   French (`12 rue de la Paix`) and Spanish, Italian or Portuguese ones (`Calle Mayor 5`, `Via Roma 10`);
 * - a UK postcode on its own (`SW1A 1AA`), and PO boxes (`P.O. Box 1234`).
 * Missed: addresses without a house number or a street-type word (`Flat 3, The Maltings`,
 * `Rose Cottage`), a town without its postcode or ZIP, a US ZIP code alone (five digits are too
 * common), street names written in lower case (`12 baker street`), and non-Latin scripts.
 */
const STREET_TYPES = [
  'Street',
  'St',
  'Avenue',
  'Ave',
  'Road',
  'Rd',
  'Boulevard',
  'Blvd',
  'Lane',
  'Ln',
  'Drive',
  'Dr',
  'Court',
  'Ct',
  'Way',
  'Place',
  'Pl',
  'Terrace',
  'Close',
  'Crescent',
  'Parkway',
  'Pkwy',
  'Highway',
  'Hwy',
  'Square',
  'Sq',
  'Circle',
  'Cir',
  'Trail',
  'Row',
  'Mews',
  'Grove',
  'Gardens',
  'Hill',
  'Walk',
  'Park',
  'Green',
].join('|');
const UK_POSTCODE = String.raw`(?:GIR ?0AA|[A-PR-UWYZ][A-HK-Y]?\d[A-Z\d]? ?\d[ABD-HJLNP-UW-Z]{2})`;
const US_STATE_ZIP = String.raw`[A-Z]{2},? \d{5}(?:-\d{4})?`;
const WORD = String.raw`[A-Z][A-Za-z'.-]*`;
const UNIT = String.raw`(?:,? (?:Apt|Apartment|Unit|Suite|Ste|Flat)\.? ?#?[A-Z0-9-]+|,? #\d+)`;
const TOWN_TAIL = String.raw`(?:,? (?:${WORD}(?: ${WORD}){0,2},? )?(?:${US_STATE_ZIP}|${UK_POSTCODE}))`;
const ENGLISH = new RegExp(
  String.raw`\b\d{1,5}[A-Z]?(?:-\d{1,5})? (?:${WORD} ){0,3}${WORD} (?:${STREET_TYPES})\b\.?(?: (?:N|S|E|W|NE|NW|SE|SW)\b)?${UNIT}?${TOWN_TAIL}?`,
  'dg',
);
const GERMANIC =
  /\b[A-ZÄÖÜ][a-zäöüß]+(?:straße|strasse|str\.|weg|gasse|platz|allee|ring|damm|laan|straat|gracht|plein|kade|singel) \d{1,4}[a-z]?\b/dgu;
const FRENCH =
  /\b\d{1,4}(?: ?(?:bis|ter))?,? (?:rue|avenue|boulevard|bd|place|allée|chemin|impasse|quai|cours) (?:(?:de la|de l'|du|des|de|d'|la|le|les) ?)?[A-ZÉÈ][\p{L}'-]+(?: [A-ZÉÈ][\p{L}'-]+){0,3}/dgu;
const ROMANCE =
  /\b(?:Calle|Avenida|Avda\.|Paseo|Plaza|Via|Viale|Piazza|Corso|Rua|Carrer) (?:(?:de la|del|de|della|dei|da|do|dos) )?[A-Z][\p{L}'-]+(?: [A-Z][\p{L}'-]+){0,3},? \d{1,4}\b/dgu;
const POSTCODE = new RegExp(String.raw`\b${UK_POSTCODE}\b`, 'dg');
const PO_BOX = /\bP\.? ?O\.? Box \d{1,6}\b/dgi;

export const addressDetector: Detector = {
  category: 'address',
  detect: (text) => [
    ...matchSpans(ENGLISH, text),
    ...matchSpans(GERMANIC, text),
    ...matchSpans(FRENCH, text),
    ...matchSpans(ROMANCE, text),
    ...matchSpans(POSTCODE, text),
    ...matchSpans(PO_BOX, text),
  ],
};
