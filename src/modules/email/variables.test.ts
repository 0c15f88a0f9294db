import { describe, expect, it } from 'vitest'
import { adminHeaders, type TestApp } from '../../../test/helpers/app.js'
import { test } from '../../../test/helpers/tenant-test.js'
import { Invalid } from '../../platform/http/errors.js'
import { getUser } from '../accounts/accounts.service.js'
import { getContact } from '../accounts/contacts.service.js'
import {
  lookUpVariables,
  parseFallbackValues,
  renderVariables,
  SUPPORTED_VARIABLES,
  type VariableSources,
} from './variables.service.js'

const ALL_NAMES = [
  'contact.name',
  'contact.email',
  'contact.phone',
  'person.first_name',
  'person.last_name',
  'person.email',
  'business.name',
  'business.address',
  'business.phone',
  'instasite.url',
  'instasite.name',
  'instareport.url',
  'instareport.link',
  'user.name',
  'user.email',
]

const none = new Map<string, string>()
const text = { html: false }
const html = { html: true }

describe('email variables', () => {
  /** The owner's complete set of sources: every record created through the admin API. */
  let sources: VariableSources
  /** A person and a business of the owner with their optional fields left empty. */
  let sparse: { person_id: string; business_id: string }

  const create = async (t: TestApp, accountId: string, kind: string, fields: object): Promise<string> => {
    const response = await t.app.inject({
      method: 'POST',
      url: `/v1/admin/accounts/${accountId}/${kind}`,
      headers: adminHeaders,
      payload: fields,
    })
    expect(response.statusCode, response.body).toBe(201)
    return response.json().data._id
  }

  test.beforeAll(async ({ t, owner }) => {
    const db = t.database.handle.db
    const contactId = await create(t, owner.accountId, 'contacts', {
      name: 'Carla Client',
      email: 'carla@example.com',
      phone: '+15550111',
    })
    const [person_id, business_id, instasite_id, instareport_id, contact, user] = await Promise.all([
      create(t, owner.accountId, 'persons', {
        first_name: 'Ada',
        last_name: 'King',
        email: 'ada@example.com',
      }),
      create(t, owner.accountId, 'businesses', {
        name: 'Acme & Sons',
        address: '1 Main St',
        phone: '+15550100',
      }),
      create(t, owner.accountId, 'instasites', { url: 'https://acme.example', name: 'Acme site' }),
      create(t, owner.accountId, 'instareports', { url: 'https://r.example/1', link: 'https://r.example/s' }),
      getContact(db, owner.accountId, contactId),
      getUser(db, owner.userId),
    ])
    sources = { person_id, business_id, instasite_id, instareport_id, contact, user }
    sparse = {
      person_id: await create(t, owner.accountId, 'persons', { first_name: 'Solo' }),
      business_id: await create(t, owner.accountId, 'businesses', { name: 'Bare Shop' }),
    }
  })

  it('supports exactly the fifteen names of the spec', () => {
    expect([...SUPPORTED_VARIABLES]).toEqual(ALL_NAMES)
  })

  describe('lookUpVariables', () => {
    test('resolves every supported name from the ids, the contact and the user', async ({ t, owner }) => {
      const found = await lookUpVariables(t.database.handle.db, owner.accountId, sources)
      expect(Object.fromEntries(found)).toEqual({
        'contact.name': 'Carla Client',
        'contact.email': 'carla@example.com',
        'contact.phone': '+15550111',
        'person.first_name': 'Ada',
        'person.last_name': 'King',
        'person.email': 'ada@example.com',
        'business.name': 'Acme & Sons',
        'business.address': '1 Main St',
        'business.phone': '+15550100',
        'instasite.url': 'https://acme.example',
        'instasite.name': 'Acme site',
        'instareport.url': 'https://r.example/1',
        'instareport.link': 'https://r.example/s',
        'user.name': 'Ada Lovelace',
        'user.email': sources.user?.email,
      })
      const template = ALL_NAMES.map((name) => `{{${name}}}`).join('|')
      expect(renderVariables(template, found, none, text)).toBe(
        'Carla Client|carla@example.com|+15550111|Ada|King|ada@example.com|Acme & Sons|1 Main St|+15550100|' +
          'https://acme.example|Acme site|https://r.example/1|https://r.example/s|Ada Lovelace|' +
          sources.user?.email,
      )
    })

    test("finds nothing from another account's ids, unknown or malformed ids, and does not throw", async ({
      t,
      owner,
      stranger,
    }) => {
      const { contact: _contact, user: _user, ...ids } = sources
      const db = t.database.handle.db
      expect((await lookUpVariables(db, stranger.accountId, ids)).size).toBe(0)
      const unknown = await lookUpVariables(db, owner.accountId, {
        person_id: '650000000000000000000009',
        business_id: 'not-an-id',
      })
      expect(unknown.size).toBe(0)
      expect((await lookUpVariables(db, owner.accountId, {})).size).toBe(0)
    })

    test('leaves out empty values, so that they fall through to the fallback', async ({ t, owner }) => {
      const found = await lookUpVariables(t.database.handle.db, owner.accountId, {
        ...sparse,
        contact: { name: 'No Mail', email: null, phone: '' },
        user: null,
      })
      expect(Object.fromEntries(found)).toEqual({
        'contact.name': 'No Mail',
        'person.first_name': 'Solo',
        'business.name': 'Bare Shop',
      })
      const fallbacks = parseFallbackValues('{"person.last_name":"Friend","business":{"address":"nowhere"}}')
      expect(
        renderVariables(
          '{{person.first_name}} {{person.last_name}}, {{business.address}}',
          found,
          fallbacks,
          text,
        ),
      ).toBe('Solo Friend, nowhere')
    })
  })

  describe('parseFallbackValues', () => {
    it('accepts the full-name form and the nested form', () => {
      expect(
        Object.fromEntries(parseFallbackValues('{"business.name":"our shop","user.name":"us"}')),
      ).toEqual({
        'business.name': 'our shop',
        'user.name': 'us',
      })
      expect(
        Object.fromEntries(
          parseFallbackValues('{"business":{"name":"our shop"},"contact":{"name":"friend"}}'),
        ),
      ).toEqual({ 'business.name': 'our shop', 'contact.name': 'friend' })
    })

    it('lets the full name win over the nested form, whatever the key order', () => {
      const both = [
        '{"business.name":"full","business":{"name":"nested"}}',
        '{"business":{"name":"nested"},"business.name":"full"}',
      ]
      for (const raw of both) expect(parseFallbackValues(raw).get('business.name')).toBe('full')
    })

    it('stringifies non-string leaves, keeps empty strings and ignores nulls', () => {
      const parsed = parseFallbackValues(
        '{"business.phone":5550100,"instasite":{"name":true,"url":null},"person.email":"","contact.name":["a"]}',
      )
      expect(Object.fromEntries(parsed)).toEqual({
        'business.phone': '5550100',
        'instasite.name': 'true',
        'person.email': '',
        'contact.name': '["a"]',
      })
    })

    it('reads undefined, empty or blank input as no fallbacks', () => {
      for (const raw of [undefined, '', '  ']) expect(parseFallbackValues(raw).size).toBe(0)
    })

    it.each(['{not json', '[]', '"text"', '42', 'null', '{"a":1'])('refuses %s naming the field', (raw) => {
      let error: unknown
      try {
        parseFallbackValues(raw)
      } catch (thrown) {
        error = thrown
      }
      expect(error).toBeInstanceOf(Invalid)
      expect(error).toMatchObject({ statusCode: 400, message: 'fallback_values must be a JSON object' })
    })
  })

  describe('renderVariables', () => {
    const found = new Map([
      ['contact.name', 'Carla'],
      ['business.name', 'Tom & "Jerry\'s" <Bar>'],
    ])
    const fallbacks = parseFallbackValues('{"contact.name":"friend","user.name":"the team","coupon":"X"}')

    it('prefers the looked-up value, then the fallback, then leaves the placeholder as written', () => {
      const template = 'Hi {{contact.name}}, from {{user.name}} at {{ instasite.url }}'
      expect(renderVariables(template, found, fallbacks, text)).toBe(
        'Hi Carla, from the team at {{ instasite.url }}',
      )
    })

    it('treats an empty looked-up value as not found', () => {
      const empty = new Map([['contact.name', '']])
      expect(renderVariables('Hi {{contact.name}}', empty, fallbacks, text)).toBe('Hi friend')
      expect(renderVariables('Hi {{contact.name}}', empty, none, text)).toBe('Hi {{contact.name}}')
    })

    it('allows whitespace inside the braces', () => {
      const template = '{{contact.name}}|{{ contact.name }}|{{\tcontact.name\n}}|{{   user.name}}'
      expect(renderVariables(template, found, fallbacks, text)).toBe('Carla|Carla|Carla|the team')
    })

    it('leaves unknown names and malformed placeholders unchanged, even with a fallback for them', () => {
      const template = '{{coupon}} {{Contact.Name}} {{contact.name} {{}} {{ }} {{contact name}}'
      expect(renderVariables(template, found, fallbacks, text)).toBe(template)
    })

    it('escapes substituted values in html mode only, and never the template', () => {
      const template = '<p title="x">{{business.name}} & {{user.name}}</p>'
      const withQuotes = parseFallbackValues('{"user.name":"<script>alert(1)</script>"}')
      expect(renderVariables(template, found, withQuotes, html)).toBe(
        '<p title="x">Tom &amp; &quot;Jerry&#39;s&quot; &lt;Bar&gt; & &lt;script&gt;alert(1)&lt;/script&gt;</p>',
      )
      expect(renderVariables(template, found, withQuotes, text)).toBe(
        '<p title="x">Tom & "Jerry\'s" <Bar> & <script>alert(1)</script></p>',
      )
    })

    it('does not expand placeholders inside substituted values', () => {
      const sneaky = new Map([['contact.name', '{{user.email}}']])
      const secret = new Map([['user.email', 'owner@example.com']])
      expect(renderVariables('{{contact.name}}', sneaky, secret, text)).toBe('{{user.email}}')
    })

    it('replaces many and repeated placeholders in one template', () => {
      const many = new Map(ALL_NAMES.map((name, i) => [name, `v${i}`]))
      const template = ALL_NAMES.map((name) => `[{{${name}}}|{{ ${name} }}]`)
        .join('\n')
        .repeat(20)
      const expected = ALL_NAMES.map((_, i) => `[v${i}|v${i}]`)
        .join('\n')
        .repeat(20)
      expect(renderVariables(template, many, none, text)).toBe(expected)
      expect(renderVariables('{{contact.name}}{{contact.name}}{{contact.name}}', found, none, text)).toBe(
        'CarlaCarlaCarla',
      )
    })
  })
})
