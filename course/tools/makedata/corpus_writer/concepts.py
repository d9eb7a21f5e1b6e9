"""What the course is about, said simply: the ideas behind a language model, written for llmlab.

Each concept has a name, the questions a student would ask about it, a short answer (what the
chat model is taught to say) and a longer explanation with an example (what the corpus says).
The facts are the standard ones of the field; every sentence was written for this project.
"""

from __future__ import annotations

__all__ = ["CONCEPTS", "Concept"]


class Concept:
    def __init__(self, key, name, questions, short, long, example):
        self.key, self.name, self.questions, self.short, self.long, self.example = key, name, questions, short, long, example


CONCEPTS = [
    Concept("modelo", "un modelo de lenguaje",
            ("¿Qué es un modelo de lenguaje?", "¿Qué hace un modelo de lenguaje?", "Explícame qué es un modelo de lenguaje."),
            "Un modelo de lenguaje es un programa que, dado un texto, calcula qué token es más probable que venga después.",
            "Un modelo de lenguaje lee un trozo de texto y calcula, para cada token posible, la probabilidad de que sea el siguiente. "
            "Para escribir, elige un token, lo añade al texto y vuelve a empezar. Así, token a token, puede continuar una frase, "
            "contestar una pregunta o escribir un cuento.",
            "Si el texto es «Había una vez», un buen modelo da mucha probabilidad a tokens como « un» o « una», y muy poca a « ordenador»."),
    Concept("token", "un token",
            ("¿Qué es un token?", "¿Qué son los tokens?", "¿Un token es lo mismo que una palabra?"),
            "Un token es un trozo de texto: una palabra, parte de una palabra o un signo. El modelo trabaja con tokens, no con letras sueltas.",
            "Los modelos no leen letras ni palabras, sino tokens. Un token puede ser una palabra corta entera, un trozo de una palabra "
            "larga o un signo de puntuación. Cada token tiene un número, y el modelo solo ve esos números.",
            "La palabra «casa» suele ser un solo token, pero una palabra rara y larga se puede partir en tres o cuatro tokens."),
    Concept("tokenizador", "el tokenizador",
            ("¿Qué es un tokenizador?", "¿Para qué sirve el tokenizador?", "¿Cómo se convierte el texto en números?"),
            "El tokenizador corta el texto en tokens y convierte cada uno en un número; también hace el camino de vuelta, de números a texto.",
            "Antes de que el modelo pueda leer un texto, el tokenizador lo corta en trozos y cambia cada trozo por su número. "
            "Muchos tokenizadores se entrenan con el método BPE: empiezan con los bytes sueltos y van uniendo las parejas que más se repiten.",
            "Con BPE, si «qu» y «e» aparecen juntos muchísimas veces, se unen en un token nuevo, «que»."),
    Concept("vocabulario", "el vocabulario de un modelo",
            ("¿Qué es el vocabulario de un modelo?", "¿Cuántos tokens conoce un modelo?"),
            "El vocabulario es la lista de todos los tokens que el modelo conoce; cada uno tiene su número.",
            "El vocabulario es la lista completa de tokens del tokenizador. Un modelo pequeño puede tener unos pocos miles; "
            "los modelos grandes suelen tener decenas de miles o más de cien mil.",
            "Si el vocabulario tiene cuatro mil tokens, el modelo elige cada vez entre cuatro mil posibilidades."),
    Concept("embedding", "un embedding",
            ("¿Qué es un embedding?", "¿Cómo representa el modelo cada token?"),
            "Un embedding es una lista de números que representa un token; tokens de significado parecido acaban con listas parecidas.",
            "Lo primero que hace el modelo con cada token es cambiarlo por un vector: una lista fija de números que se aprende "
            "durante el entrenamiento. A esa lista se le llama embedding.",
            "Después de entrenar, los embeddings de «perro» y «gato» suelen estar más cerca entre sí que del de «tenedor»."),
    Concept("probabilidad", "la probabilidad del siguiente token",
            ("¿Cómo decide el modelo la siguiente palabra?", "¿Qué calcula el modelo en cada paso?"),
            "En cada paso el modelo da una probabilidad a cada token del vocabulario; después se elige uno según esas probabilidades.",
            "Al final de cada paso, el modelo produce un número por cada token del vocabulario. La función softmax convierte esos "
            "números en probabilidades que suman uno. Después, una regla de decodificación elige el siguiente token.",
            "Tras «El cielo es», el modelo puede dar un cuarenta por ciento a « azul» y un cinco por ciento a « gris»."),
    Concept("entrenamiento", "el entrenamiento",
            ("¿Cómo se entrena un modelo de lenguaje?", "¿Qué significa entrenar un modelo?", "¿Cómo aprende un modelo?"),
            "Entrenar es mostrarle al modelo muchísimo texto y ajustar sus parámetros poco a poco para que acierte mejor el siguiente token.",
            "Durante el entrenamiento, el modelo intenta adivinar cada token de un texto a partir de los anteriores. Cuando se "
            "equivoca, el descenso por gradiente ajusta un poco sus parámetros para que la próxima vez acierte más. "
            "Esto se repite millones de veces.",
            "Si el modelo lee «El perro ladra» y daba poca probabilidad a « ladra», sus parámetros cambian para darle más."),
    Concept("parámetros", "los parámetros",
            ("¿Qué son los parámetros de un modelo?", "¿Qué significa que un modelo tenga millones de parámetros?"),
            "Los parámetros son los números que el modelo aprende al entrenar; cuantos más tiene, más cosas puede recordar, pero más memoria ocupa.",
            "Un modelo es, en el fondo, un montón de números llamados parámetros o pesos. El entrenamiento los ajusta. "
            "Los modelos del curso tienen unos pocos millones; los más grandes del mundo tienen cientos de miles de millones.",
            "Un modelo de siete mil millones de parámetros guardados con dos bytes cada uno ocupa unos catorce gigabytes."),
    Concept("pérdida", "la función de pérdida",
            ("¿Qué es la pérdida?", "¿Qué mide la entropía cruzada?", "¿Cómo sabe el modelo si se equivoca?"),
            "La pérdida mide cuánto se equivoca el modelo; la más usada es la entropía cruzada, el logaritmo negativo de la probabilidad que dio al token correcto.",
            "Para saber si lo hace bien, se mira qué probabilidad dio el modelo al token que de verdad venía. La entropía cruzada es "
            "menos el logaritmo de esa probabilidad: vale cero si el modelo estaba seguro y acertó, y crece mucho si dio muy poca probabilidad.",
            "Si el modelo dio una probabilidad de 0,5 al token correcto, la pérdida de ese paso es unos 0,69 nats."),
    Concept("perplejidad", "la perplejidad",
            ("¿Qué es la perplejidad?", "¿Para qué sirve la perplejidad?"),
            "La perplejidad es la exponencial de la pérdida media. Cuanto más baja, mejor: es como el tamaño de una lista de tokens igual de probables entre los que el modelo no sabría elegir.",
            "La perplejidad resume la pérdida en un número fácil de imaginar: es como si el modelo dudara, en cada paso, entre ese número de tokens igual de probables.",
            "Un modelo con perplejidad diez duda, de media, como si tuviera que elegir entre diez tokens."),
    Concept("validación", "los datos de validación",
            ("¿Para qué sirven los datos de validación?", "¿Qué es el sobreajuste?"),
            "Los datos de validación son textos que el modelo no ve al entrenar; sirven para comprobar si ha aprendido de verdad o solo ha memorizado.",
            "Si un modelo solo mejora con los textos de entrenamiento y empeora con los de validación, está memorizando: eso es el sobreajuste. "
            "Por eso se guarda una parte de los datos aparte y se mide la pérdida en ella.",
            "Cuando la pérdida de entrenamiento baja pero la de validación sube, es hora de parar."),
    Concept("atención", "la atención",
            ("¿Qué es la atención en un transformer?", "¿Cómo sabe el modelo qué palabras anteriores son importantes?"),
            "La atención permite que cada token mire a los tokens anteriores y tome información de los que más le importan.",
            "En la atención, cada token hace una pregunta (la consulta) y los tokens anteriores ofrecen una etiqueta (la clave) y un contenido (el valor). "
            "Cuanto mejor encaja la consulta con una clave, más peso tiene ese valor en el resultado.",
            "En «Lucía perdió su pelota y la buscó», la atención ayuda a que « la» mire a « pelota»."),
    Concept("transformer", "un transformer",
            ("¿Qué es un transformer?", "¿Cómo está hecho un modelo como GPT?"),
            "Un transformer es una pila de bloques iguales; cada bloque tiene una capa de atención y una red pequeña, con normalizaciones y conexiones residuales.",
            "Casi todos los modelos de lenguaje actuales son transformers: varios bloques iguales, uno detrás de otro. En cada bloque, "
            "la atención mezcla información entre tokens y una red de dos o tres capas la transforma token a token.",
            "El modelo base del curso tiene varios bloques de este tipo, uno detrás de otro."),
    Concept("contexto", "la ventana de contexto",
            ("¿Qué es la ventana de contexto?", "¿Cuánto texto puede leer un modelo a la vez?"),
            "La ventana de contexto es el número máximo de tokens que el modelo puede tener en cuenta a la vez.",
            "Un modelo solo puede mirar un número fijo de tokens: su ventana de contexto. Lo que queda fuera, el modelo no lo ve. "
            "Los modelos del curso tienen una ventana pequeña; algunos modelos grandes leen cientos de miles de tokens.",
            "Con una ventana de doscientos cincuenta y seis tokens, un cuento largo no cabe entero."),
    Concept("temperatura", "la temperatura",
            ("¿Qué hace la temperatura al generar texto?", "¿Para qué sirve la temperatura?", "¿Qué pasa si subo la temperatura?"),
            "La temperatura divide las puntuaciones antes de la softmax: baja, el modelo elige casi siempre lo más probable; alta, se arriesga más y varía más.",
            "Antes de convertir las puntuaciones en probabilidades, se dividen por la temperatura. Con una temperatura baja, el token favorito "
            "se lleva casi toda la probabilidad y el texto es más previsible. Con una alta, las probabilidades se igualan y el texto es más variado, pero también comete más errores.",
            "Con temperatura cero se elige siempre el token más probable; con temperatura dos, el texto suele volverse raro."),
    Concept("top-p", "el muestreo top-p",
            ("¿Qué es el muestreo top-p?", "¿Qué diferencia hay entre top-k y top-p?"),
            "Top-k se queda con los k tokens más probables; top-p se queda con los más probables hasta sumar una probabilidad p, y sortea entre ellos.",
            "Para no elegir tokens absurdos, se recorta la lista antes de sortear. Top-k guarda siempre el mismo número de candidatos; "
            "top-p guarda los justos para sumar, por ejemplo, el noventa por ciento de la probabilidad.",
            "Si el primer token tiene un noventa y cinco por ciento, top-p con p igual a 0,9 se queda solo con él."),
    Concept("voraz", "la decodificación voraz",
            ("¿Qué es la decodificación voraz?", "¿Qué es greedy decoding?"),
            "La decodificación voraz elige siempre el token más probable; es determinista, pero puede repetirse mucho.",
            "La forma más sencilla de escribir con un modelo es quedarse siempre con el token más probable. El resultado es siempre el mismo "
            "para el mismo texto de partida, pero a menudo cae en bucles y repite frases.",
            "Un modelo pequeño con decodificación voraz puede acabar escribiendo «el agua, el agua, el agua»."),
    Concept("caché", "la caché KV",
            ("¿Qué es la caché KV?", "¿Por qué la caché KV acelera la generación?"),
            "La caché KV guarda las claves y los valores de los tokens ya procesados, para no calcularlos otra vez en cada paso de la generación.",
            "Al generar, cada token nuevo necesita las claves y los valores de todos los anteriores. En lugar de calcularlos otra vez, se guardan en "
            "memoria: eso es la caché KV. Ahorra muchísimo cálculo, pero ocupa memoria que crece con cada token.",
            "Sin caché, generar cien tokens obliga a procesar el texto completo cien veces."),
    Concept("cuantización", "la cuantización",
            ("¿Qué es la cuantización?", "¿Para qué sirve cuantizar un modelo?"),
            "Cuantizar es guardar los parámetros con menos bits, por ejemplo ocho o cuatro en lugar de dieciséis, para que el modelo ocupe menos y vaya más rápido.",
            "Los parámetros suelen guardarse con dieciséis bits. Si se redondean a ocho o a cuatro bits, el modelo ocupa la mitad o la cuarta parte "
            "y se lee más deprisa de la memoria, a cambio de perder un poco de precisión.",
            "Un modelo de siete mil millones de parámetros pasa de unos catorce gigabytes a unos cuatro con cuatro bits."),
    Concept("ajuste", "el ajuste fino",
            ("¿Qué es el ajuste fino?", "¿Qué es el fine-tuning?", "¿Cómo se convierte un modelo base en un asistente?"),
            "El ajuste fino es seguir entrenando un modelo ya entrenado con datos de una tarea concreta, por ejemplo preguntas y respuestas.",
            "Un modelo base solo sabe continuar textos. Para que responda preguntas, se le sigue entrenando con ejemplos de conversaciones: "
            "eso es el ajuste fino supervisado. Normalmente la pérdida solo cuenta en las respuestas, no en las preguntas.",
            "El modelo de chat del curso es el modelo base ajustado con miles de preguntas y respuestas cortas."),
    Concept("lora", "LoRA",
            ("¿Qué es LoRA?", "¿Por qué LoRA necesita tan poca memoria?"),
            "LoRA congela el modelo y entrena solo dos matrices pequeñas por capa, cuyo producto se suma a los pesos originales.",
            "En lugar de cambiar todos los parámetros, LoRA deja el modelo quieto y aprende una corrección pequeña: el producto de dos matrices "
            "estrechas. Así se entrena una fracción diminuta de los parámetros y el adaptador ocupa muy poco.",
            "Con rango 8, una matriz de 4096 por 4096 solo necesita 8 × (4096 + 4096) = 65.536 parámetros nuevos, en lugar de más de dieciséis millones."),
    Concept("plantilla", "la plantilla de chat",
            ("¿Qué es una plantilla de chat?", "¿Para qué sirven los tokens especiales?"),
            "Una plantilla de chat marca con tokens especiales quién habla en cada momento, para que el modelo distinga la pregunta de la respuesta.",
            "Para conversar, el texto se envuelve con marcas especiales: una para el usuario, otra para el asistente y otra para el final de cada turno. "
            "El modelo aprende a escribir su turno y a cerrarlo con la marca de final.",
            "Si el modelo no ve la marca de final, no sabe cuándo debe dejar de hablar."),
    Concept("alucinación", "una alucinación",
            ("¿Qué es una alucinación de un modelo?", "¿Por qué los modelos se inventan cosas?"),
            "Una alucinación es una respuesta que suena segura pero es falsa; el modelo escribe lo que parece probable, no lo que ha comprobado.",
            "Un modelo de lenguaje no consulta una lista de hechos: escribe lo que le parece probable. Por eso a veces se inventa fechas, "
            "nombres o datos con toda tranquilidad. Hay que comprobar lo importante.",
            "Un modelo pequeño puede afirmar sin dudar que una ciudad inventada es la capital de un país."),
    Concept("destilación", "la destilación",
            ("¿Qué es la destilación de modelos?", "¿Cómo aprende un modelo pequeño de uno grande?"),
            "En la destilación, un modelo pequeño aprende a imitar las probabilidades de uno grande, y no solo la respuesta correcta.",
            "El modelo grande, el profesor, reparte su probabilidad entre muchos tokens. El pequeño, el alumno, aprende a copiar ese reparto, "
            "que contiene más información que la simple respuesta correcta.",
            "Si el profesor duda entre « perro» y « gato», el alumno aprende que los dos eran razonables."),
    Concept("especulativa", "la decodificación especulativa",
            ("¿Qué es la decodificación especulativa?", "¿Cómo ayuda un modelo pequeño a uno grande a ir más rápido?"),
            "Un modelo pequeño propone varios tokens seguidos y el grande los comprueba todos de una vez; se aceptan los que el grande habría elegido.",
            "El modelo pequeño, el borrador, escribe deprisa unos cuantos tokens. El grande los revisa en una sola pasada y se queda con los que "
            "coinciden con lo que él habría escrito. Si el borrador acierta a menudo, se generan varios tokens por cada pasada del grande.",
            "El modelo pequeño del curso hace de borrador para el modelo base: los dos usan el mismo tokenizador."),
    Concept("memoria", "la memoria de la GPU",
            ("¿Por qué un modelo necesita tanta memoria?", "¿Qué ocupa la memoria al ejecutar un modelo?"),
            "La memoria la ocupan sobre todo los parámetros y, al generar, la caché KV, que crece con cada token y con cada conversación.",
            "Para ejecutar un modelo hay que tener sus parámetros en memoria. Además, cada conversación en marcha guarda su caché KV. "
            "Por eso el tamaño del modelo y la longitud de los textos deciden cuántas personas se pueden atender a la vez.",
            "Dos bytes por parámetro: un modelo de mil millones de parámetros ocupa unos dos gigabytes."),
    Concept("velocidad", "los tokens por segundo",
            ("¿Qué son los tokens por segundo?", "¿Qué es la latencia de un modelo?"),
            "Los tokens por segundo miden la velocidad de generación; la latencia es el tiempo que se espera hasta ver el primer token.",
            "Cuando un modelo escribe, interesan dos cosas: cuánto tarda en aparecer la primera palabra, que es la latencia, y a qué ritmo "
            "llegan las siguientes, que se mide en tokens por segundo.",
            "Si un modelo escribe veinte tokens por segundo, una respuesta de cien tokens tarda unos cinco segundos."),
    Concept("prompt", "el prompt",
            ("¿Qué es un prompt?", "¿Qué es la instrucción que se le da a un modelo?"),
            "El prompt es el texto de partida que se le da al modelo: una pregunta, una instrucción o el principio de un texto.",
            "Todo lo que el modelo escribe depende del texto que recibe al principio, el prompt. Un prompt claro y con ejemplos suele dar mejores resultados.",
            "El prompt «Había una vez» invita al modelo a escribir un cuento."),
    Concept("base", "un modelo base",
            ("¿Qué diferencia hay entre un modelo base y un modelo de chat?", "¿Qué es un modelo base?"),
            "Un modelo base solo continúa textos; un modelo de chat ha sido ajustado para responder a preguntas siguiendo una plantilla.",
            "El modelo base aprende a continuar textos de cualquier tipo. Si le haces una pregunta, puede seguir escribiendo más preguntas. "
            "El modelo de chat ha aprendido, con ajuste fino, a contestar y a terminar su turno.",
            "Al modelo base del curso se le da el principio de un cuento; al de chat, una pregunta."),
    Concept("semilla", "la semilla aleatoria",
            ("¿Para qué sirve la semilla aleatoria?", "¿Por qué el modelo escribe cosas distintas cada vez?"),
            "Al muestrear, el modelo sortea cada token; la semilla fija ese sorteo, así que la misma semilla repite el mismo texto.",
            "Cuando se genera con muestreo, cada token se elige al azar según sus probabilidades. El azar del ordenador depende de un número "
            "inicial, la semilla: con la misma semilla y los mismos ajustes, el texto sale igual.",
            "Con la semilla tres y la misma temperatura, el modelo repite exactamente el mismo cuento."),
]
