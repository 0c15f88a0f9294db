/** The texts of the authorization pages, one catalog per language; `user_locale` picks one. */
export const LOCALES = ['en', 'es'] as const
export type Locale = (typeof LOCALES)[number]

const en = {
  signInTitle: 'Sign in',
  signInLead: '{app} wants to access your account.',
  email: 'Email',
  password: 'Password',
  signIn: 'Sign in',
  wrongCredentials: 'The email or password is not right.',
  noAccounts: 'Your user belongs to no account.',
  chooseTitle: 'Choose an account',
  chooseLead: 'Which account may {app} access?',
  main: 'main',
  continue: 'Continue',
  consentTitle: 'Allow access',
  consentLead: '{app} asks to:',
  consentAccount: 'in the account {account}',
  consentRedirect: 'You will then be sent to {uri}.',
  allow: 'Allow',
  deny: 'Deny',
  errorTitle: 'This request cannot continue',
  expired: 'This page has expired. Start again from the app.',
  tooMany: 'Too many attempts. Try again in {wait}.',
  second: '1 second',
  seconds: '{n} seconds',
  minute: '1 minute',
  minutes: '{n} minutes',
  accountSuspended: 'This account is suspended: no app can be allowed access to it.',
  httpsRequired: 'HTTPS is required. Open this page at its https:// address.',
}

const es: typeof en = {
  signInTitle: 'Iniciar sesión',
  signInLead: '{app} quiere acceder a tu cuenta.',
  email: 'Correo electrónico',
  password: 'Contraseña',
  signIn: 'Iniciar sesión',
  wrongCredentials: 'El correo o la contraseña no son correctos.',
  noAccounts: 'Tu usuario no pertenece a ninguna cuenta.',
  chooseTitle: 'Elige una cuenta',
  chooseLead: '¿A qué cuenta puede acceder {app}?',
  main: 'principal',
  continue: 'Continuar',
  consentTitle: 'Permitir el acceso',
  consentLead: '{app} pide permiso para:',
  consentAccount: 'en la cuenta {account}',
  consentRedirect: 'Después irás a {uri}.',
  allow: 'Permitir',
  deny: 'Denegar',
  errorTitle: 'Esta solicitud no puede continuar',
  expired: 'Esta página ha caducado. Vuelve a empezar desde la aplicación.',
  tooMany: 'Demasiados intentos. Vuelve a probar dentro de {wait}.',
  second: '1 segundo',
  seconds: '{n} segundos',
  minute: '1 minuto',
  minutes: '{n} minutos',
  accountSuspended: 'Esta cuenta está suspendida: no se puede permitir el acceso a ninguna aplicación.',
  httpsRequired: 'Se requiere HTTPS. Abre esta página en su dirección https://.',
}

export type PageTextKey = keyof typeof en
const catalogs: Record<Locale, typeof en> = { en, es }

/**
 * What each scope lets an app do, in the languages other than English (English is the scope table's own
 * description, which also covers a scope added there before it is translated here).
 */
const scopeDescriptions: Record<Exclude<Locale, 'en'>, Record<string, string>> = {
  es: {
    'crm.contacts.read': 'Ver tus contactos',
    'crm.contacts.write': 'Crear y cambiar tus contactos',
    'crm.deals.read': 'Ver tus oportunidades',
    'crm.deals.write': 'Crear y cambiar tus oportunidades',
    'billing.read': 'Ver tus datos de facturación y tus facturas',
    'projects.tasks.read': 'Ver las tareas de tus proyectos',
    'analytics.read': 'Ver tus estadísticas e informes',
    'sites.read': 'Ver tus sitios y embudos',
    'sites.write': 'Crear y cambiar tus sitios y embudos',
    'reviews.read': 'Ver tus solicitudes de reseñas y su configuración',
    'reviews.write': 'Cambiar cómo y cuándo se pide una reseña a tus clientes',
    'leads.read': 'Ver tus campañas de anuncios de clientes potenciales y los contactos que captaron',
    'leads.write': 'Cambiar tus campañas de anuncios de clientes potenciales y su conexión',
  },
}

export function scopeDescription(locale: Locale, scope: string, english: string): string {
  return locale === 'en' ? english : (scopeDescriptions[locale][scope] ?? english)
}

/** `user_locale` as a language: `es`, `es-MX` and `es_ES` are Spanish; anything else is English. */
export function localeOf(userLocale: unknown): Locale {
  const language = typeof userLocale === 'string' ? userLocale.slice(0, 2).toLowerCase() : ''
  return (LOCALES as readonly string[]).includes(language) ? (language as Locale) : 'en'
}

/** The text in the language, `{name}` replaced by the (unescaped) value; pages escape what they show. */
export function pageText(locale: Locale, key: PageTextKey, values: Record<string, string> = {}): string {
  return catalogs[locale][key].replace(
    /\{(\w+)\}/g,
    (placeholder, name: string) => values[name] ?? placeholder,
  )
}

/** A wait in words, rounded up: seconds under a minute, else whole minutes ("2 minutes" for 61 s). */
export function waitText(locale: Locale, seconds: number): string {
  const [one, many, n] =
    seconds < 60
      ? (['second', 'seconds', seconds] as const)
      : (['minute', 'minutes', Math.ceil(seconds / 60)] as const)
  return n === 1 ? pageText(locale, one) : pageText(locale, many, { n: String(n) })
}
